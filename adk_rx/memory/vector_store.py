"""VectorStore: text chunks with their vectors in SQLite or PostgreSQL, ranked by cosine.

::

    adk_vector_chunks   id -> scope, source, key, timestamp, text, embedding
    adk_vector_sources  (scope, source) -> fingerprint     what a source was indexed from
    adk_vector_config   key -> value                       embedder, dimension, search method
    adk_vector_knn      (SQLite with sqlite-vec) binary vectors by chunk id, per scope

A *scope* is whose chunks they are (one app's user for memory, one folder for documents);
every read and write names one, and nothing crosses it. A *source* is what the chunks came
from (a session, a file); its chunks are replaced together. The embedder's name and
dimension are recorded when the tables are created: another embedder's vectors would rank
nonsense, so a store opened with one is refused (ConfigurationError) and nothing is lost.

The methods block; :class:`~adk_rx.memory.vector.VectorMemoryService` runs them on the I/O
scheduler. The backends are :mod:`~adk_rx.memory.vector_sqlite` and
:mod:`~adk_rx.memory.vector_postgres`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event as sa_event

from adk_rx.errors import ConfigurationError
from adk_rx.memory.vector_postgres import PostgresVectors, find_pgvector
from adk_rx.memory.vector_sqlite import SqliteVectors, load_sqlite_vec, sqlite_vec_driver
from adk_rx.sessions.sql_engine import Database, normalize_url
from adk_rx.sessions.sql_schema import SCHEMA_VERSIONS, check_version

__all__ = ["Hit", "NewChunk", "VectorStore"]

SCHEMA_VERSION = 1

_CONFIG = (
    "CREATE TABLE IF NOT EXISTS adk_vector_config "
    "(key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)"
)
_SOURCES = (
    "CREATE TABLE IF NOT EXISTS adk_vector_sources (scope TEXT NOT NULL, source TEXT NOT NULL, "
    "fingerprint TEXT NOT NULL, PRIMARY KEY (scope, source))"
)
_KEYS = sa.text("SELECT id, key FROM adk_vector_chunks WHERE scope = :scope AND source = :source")
_FINGERPRINTS = sa.text("SELECT source, fingerprint FROM adk_vector_sources WHERE scope = :scope")
_FORGET_SOURCE = sa.text("DELETE FROM adk_vector_sources WHERE scope = :scope AND source = :source")
_NOTE_SOURCE = sa.text(
    "INSERT INTO adk_vector_sources (scope, source, fingerprint) VALUES (:scope, :source, :fp) "
    "ON CONFLICT (scope, source) DO UPDATE SET fingerprint = excluded.fingerprint"
)


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk to store: its key, time, text and unit vector."""

    key: str
    timestamp: float
    text: str
    vector: Sequence[float]


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: where the chunk came from, its time and text, and its cosine."""

    source: str
    timestamp: float
    text: str
    score: float


class VectorStore:
    """Chunks and vectors in one database, for one embedder.

    Args:
        url: ``sqlite:///path.db``, ``sqlite://`` (in memory) or ``postgresql://...``.
        embedder_name: recorded with the vectors; a store made by another embedder is refused.
        dimension: the vector length.
        use_index: use sqlite-vec or pgvector when they are available (False: the exact scan,
            as if they were not).
        candidates: how many chunks SQLite's binary pass hands to the exact ranking.
        exact_up_to: on SQLite with sqlite-vec, scopes of at most this many chunks are
            searched exactly; larger ones through the binary index.
        **engine_options: passed to :class:`~adk_rx.sessions.sql_engine.Database`.
    """

    def __init__(
        self,
        url: str,
        *,
        embedder_name: str,
        dimension: int,
        use_index: bool = True,
        candidates: int = 64,
        exact_up_to: int = 5000,
        **engine_options: Any,
    ) -> None:
        self.embedder_name = embedder_name
        self.dimension = dimension
        self._use_index = use_index
        self._candidates = candidates
        self._exact_up_to = exact_up_to
        driver = None
        if use_index and normalize_url(url).get_backend_name() == "sqlite":
            driver = sqlite_vec_driver()
            if driver is not None and driver.__name__ != "sqlite3":
                engine_options.setdefault("module", driver)
        self._db = Database(url, **engine_options)
        if driver is not None:
            sa_event.listen(self._db.engine, "connect", lambda conn, _: load_sqlite_vec(conn))
        self._has_sqlite_vec = driver is not None and dimension % 8 == 0
        self._vectors: SqliteVectors | PostgresVectors | None = None

    @property
    def method(self) -> str:
        """How searches run: ``sqlite-vec``, ``pgvector`` or ``exact`` (after first use)."""
        vectors = self._ready()
        if not vectors.indexed:
            return "exact"
        return "sqlite-vec" if isinstance(vectors, SqliteVectors) else "pgvector"

    # -- reads and writes (blocking) --------------------------------------------------------

    def keys(self, scope: str, source: str) -> list[tuple[int, str]]:
        """The ids and keys of a source's chunks."""
        self._ready()
        with self._db.read("reading memory chunks") as tx:
            return [
                (row[0], row[1]) for row in tx.execute(_KEYS, {"scope": scope, "source": source})
            ]

    def replace(
        self,
        scope: str,
        source: str,
        keys: Sequence[str],
        new: Mapping[str, NewChunk],
        *,
        fingerprint: str | None = None,
    ) -> list[str]:
        """Makes the source's chunks the ones keyed ``keys``, in one transaction.

        Chunks already stored under one of the keys stay as they are; the others are deleted;
        each key without a stored chunk is inserted from ``new``.

        Returns:
            The keys that are neither stored nor in ``new`` (another writer deleted them since
            they were read): nothing was written; embed them and call again.
        """
        vectors = self._ready()
        with self._db.write("storing memory chunks") as tx:
            wanted = Counter(keys)
            stale: list[int] = []
            for chunk_id, key in tx.execute(_KEYS, {"scope": scope, "source": source}).fetchall():
                if wanted[key] > 0:
                    wanted[key] -= 1
                else:
                    stale.append(chunk_id)
            missing = [key for key, count in wanted.items() if count > 0 and key not in new]
            if missing:
                return missing
            vectors.delete(tx, scope, stale)
            rows = [
                {"key": key, "timestamp": c.timestamp, "text": c.text, "vector": c.vector}
                for key, count in wanted.items()
                if count > 0
                for c in [new[key]] * count
            ]
            vectors.insert(tx, scope, source, rows)
            if fingerprint is not None:
                params = {"scope": scope, "source": source, "fp": fingerprint}
                tx.execute(_NOTE_SOURCE, params)
        return []

    def delete_source(self, scope: str, source: str) -> None:
        """Deletes a source's chunks and fingerprint."""
        vectors = self._ready()
        key = {"scope": scope, "source": source}
        with self._db.write("forgetting memory chunks") as tx:
            ids = [row[0] for row in tx.execute(_KEYS, key).fetchall()]
            vectors.delete(tx, scope, ids)
            tx.execute(_FORGET_SOURCE, key)

    def fingerprints(self, scope: str) -> dict[str, str]:
        """Source -> the fingerprint it was last indexed with."""
        self._ready()
        with self._db.read("reading indexed sources") as tx:
            return {row[0]: row[1] for row in tx.execute(_FINGERPRINTS, {"scope": scope})}

    def search(self, scope: str, vector: Sequence[float], k: int) -> list[Hit]:
        """The ``k`` chunks of ``scope`` nearest to ``vector``, most similar first."""
        vectors = self._ready()
        with self._db.read("searching memory") as tx:
            rows = vectors.search(tx, scope, vector, k)
        return [Hit(source, ts, text, score) for _, source, ts, text, score in rows]

    def close(self) -> None:
        """Closes the pooled connections."""
        self._db.dispose()

    # -- set-up ------------------------------------------------------------------------------

    def _ready(self) -> SqliteVectors | PostgresVectors:
        self._db.ensure("vector memory", self._create)
        assert self._vectors is not None
        return self._vectors

    def _create(self, conn: sa.Connection) -> None:
        SCHEMA_VERSIONS.create(conn, checkfirst=True)
        conn.exec_driver_sql(_CONFIG)
        conn.exec_driver_sql(_SOURCES)
        config = dict(conn.execute(sa.text("SELECT key, value FROM adk_vector_config")).all())
        self._check_embedder(config)
        method = config.get("method")
        if self._db.is_sqlite:
            if method == "sqlite-vec" and not self._has_sqlite_vec:
                raise ConfigurationError(
                    f"{self._db.url.render_as_string()} is indexed with sqlite-vec, which "
                    'cannot be loaded here: pip install "adk_rx[vector]"'
                )
            vectors: SqliteVectors | PostgresVectors = SqliteVectors(
                indexed=self._has_sqlite_vec,
                dimension=self.dimension,
                candidates=self._candidates,
                exact_up_to=self._exact_up_to,
            )
        else:
            schema = config.get("pgvector_schema") if method is not None else None
            if method is None and self._use_index:
                schema = find_pgvector(conn)
            vectors = PostgresVectors(pgvector_schema=schema, dimension=self.dimension)
            if schema is not None:
                config["pgvector_schema"] = schema
        vectors.create(conn, was_indexed=method not in (None, "exact"))
        config.update(
            embedder=self.embedder_name,
            dimension=str(self.dimension),
            method="exact"
            if not vectors.indexed
            else ("sqlite-vec" if self._db.is_sqlite else "pgvector"),
        )
        conn.execute(sa.text("DELETE FROM adk_vector_config"))
        for key, value in config.items():
            conn.execute(
                sa.text("INSERT INTO adk_vector_config (key, value) VALUES (:k, :v)"),
                {"k": key, "v": value},
            )
        check_version(conn, "vector_memory", SCHEMA_VERSION)
        self._vectors = vectors

    def _check_embedder(self, config: Mapping[str, str]) -> None:
        stored = config.get("embedder")
        if stored is None:
            return
        if stored != self.embedder_name or config.get("dimension") != str(self.dimension):
            raise ConfigurationError(
                f"the memory store {self._db.url.render_as_string(hide_password=True)} holds "
                f"vectors of {stored!r} ({config.get('dimension')} numbers); this service "
                f"embeds with {self.embedder_name!r} ({self.dimension}): use the same "
                "embedder, or another database"
            )
