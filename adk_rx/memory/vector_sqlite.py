"""The SQLite side of the vector store: float32 vectors in a BLOB, sqlite-vec for the search.

A scope (one user's memories) of up to ``exact_up_to`` chunks is searched exactly: the
cosine of every vector of the scope, in SQL with sqlite-vec's ``vec_distance_cosine`` (about a
microsecond a chunk). When a scope grows past that, its vectors also go into a ``vec0`` table,
one bit per number, partitioned by scope, and a search takes the ``candidates`` nearest by
Hamming distance from it and ranks them by their exact cosine::

    query --binary KNN (k = candidates, one scope)--> ids --exact cosine of the floats--> top k

One bit per number keeps the ranking of good embeddings close to exact (measured in
``benchmarks/memory_search.py``) at a fraction of the cost of a float scan. Only large scopes
get a partition: sqlite-vec allocates whole chunks per partition (``chunk_size`` vectors), which
would cost every small user tens of kilobytes.

Many Python builds (pyenv's default, macOS's system Python) cannot load SQLite extensions.
Then the connection comes from ``pysqlite3`` (the ``pysqlite3-binary`` wheel, in the same
extra) when it is installed. Without either, the store searches by an exact scan of the
scope's vectors in Python: correct, but its cost grows with the number of memories.
"""

from __future__ import annotations

import heapq
import operator
import sqlite3
from array import array
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import sqlalchemy as sa

from adk_rx.sessions.sql_engine import Tx

__all__ = ["SqliteVectors", "sqlite_vec_driver"]

_CREATE = (
    "CREATE TABLE IF NOT EXISTS adk_vector_chunks ("
    "id INTEGER PRIMARY KEY, scope TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL, "
    "timestamp REAL NOT NULL, text TEXT NOT NULL, embedding BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS adk_vector_chunks_source ON adk_vector_chunks (scope, source)",
    # How many chunks each scope holds, and whether they are in the binary index.
    "CREATE TABLE IF NOT EXISTS adk_vector_scopes ("
    "scope TEXT PRIMARY KEY, chunks INTEGER NOT NULL, indexed INTEGER NOT NULL)",
)
_INSERT = sa.text(
    "INSERT INTO adk_vector_chunks (scope, source, key, timestamp, text, embedding) "
    "VALUES (:scope, :source, :key, :timestamp, :text, :embedding)"
)
_INSERT_KNN = sa.text(
    "INSERT INTO adk_vector_knn (rowid, scope, embedding) "
    "VALUES (:id, :scope, vec_quantize_binary(:embedding))"
)
_INDEX_SCOPE = sa.text(
    "INSERT INTO adk_vector_knn (rowid, scope, embedding) "
    "SELECT id, scope, vec_quantize_binary(embedding) FROM adk_vector_chunks WHERE scope = :scope"
)
_COUNT = sa.text(
    "INSERT INTO adk_vector_scopes (scope, chunks, indexed) VALUES (:scope, :delta, 0) "
    "ON CONFLICT (scope) DO UPDATE SET chunks = chunks + excluded.chunks "
    "RETURNING chunks, indexed"
)
_MARK_INDEXED = sa.text("UPDATE adk_vector_scopes SET indexed = 1 WHERE scope = :scope")
_IS_INDEXED = sa.text("SELECT indexed FROM adk_vector_scopes WHERE scope = :scope")
_DELETE = sa.text("DELETE FROM adk_vector_chunks WHERE id = :id")
_DELETE_KNN = sa.text("DELETE FROM adk_vector_knn WHERE rowid = :id")
_SCAN = sa.text(
    "SELECT id, source, timestamp, text, embedding FROM adk_vector_chunks WHERE scope = :scope"
)
# Distances in SQL (sqlite-vec); a zero vector has no direction: its NULL distance counts as
# a cosine of 0.
_DISTANCE = "coalesce(vec_distance_cosine(c.embedding, :query), 1.0)"
_EXACT = sa.text(
    f"SELECT c.id, c.source, c.timestamp, c.text, 1.0 - {_DISTANCE} FROM adk_vector_chunks AS c "
    f"WHERE c.scope = :scope ORDER BY {_DISTANCE}, c.id LIMIT :k"
)
_NEAREST = sa.text(
    "WITH candidates AS (SELECT rowid AS id FROM adk_vector_knn "
    "WHERE embedding MATCH vec_quantize_binary(:query) AND k = :candidates AND scope = :scope) "
    f"SELECT c.id, c.source, c.timestamp, c.text, 1.0 - {_DISTANCE} "
    f"FROM candidates JOIN adk_vector_chunks AS c USING (id) ORDER BY {_DISTANCE}, c.id LIMIT :k"
)

Row = tuple[int, str, float, str, float]
"""A search result: id, source, timestamp, text, cosine similarity."""


def sqlite_vec_driver() -> ModuleType | None:
    """The DB-API module that can load sqlite-vec here, or None (no extension, no pysqlite3).

    The standard library's when this Python allows extensions, else ``pysqlite3``'s.
    """
    try:
        import sqlite_vec  # noqa: F401  # pyright: ignore[reportMissingImports, reportUnusedImport]
    except ImportError:
        return None
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        from pysqlite3 import dbapi2  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    return dbapi2


def load_sqlite_vec(dbapi_connection: Any) -> None:
    """Loads the extension into a new driver connection (a SQLAlchemy ``connect`` hook)."""
    import sqlite_vec  # pyright: ignore[reportMissingImports]

    dbapi_connection.enable_load_extension(True)
    try:
        sqlite_vec.load(dbapi_connection)
    finally:
        dbapi_connection.enable_load_extension(False)


def to_blob(vector: Sequence[float]) -> bytes:
    """A vector as the float32 BLOB that SQLite and sqlite-vec read."""
    return array("f", vector).tobytes()


def _cosine(query: array[float], blob: bytes) -> float:
    # Both are unit vectors (or zero), so the dot product is the cosine.
    stored = array("f")
    stored.frombytes(blob)
    return sum(map(operator.mul, query, stored))


class SqliteVectors:
    """Writes and searches the chunk vectors on SQLite, with or without sqlite-vec.

    Args:
        indexed: sqlite-vec is loaded and the ``adk_vector_knn`` table is in use.
        dimension: the vector length.
        candidates: how many chunks the binary pass hands to the exact ranking.
        exact_up_to: scopes with at most this many chunks are searched exactly.
    """

    def __init__(self, *, indexed: bool, dimension: int, candidates: int, exact_up_to: int) -> None:
        self.indexed = indexed
        self.dimension = dimension
        self.candidates = candidates
        self.exact_up_to = exact_up_to

    def create(self, conn: sa.Connection, *, was_indexed: bool) -> None:
        """Creates the tables; indexes the large scopes when the binary index is new."""
        for statement in _CREATE:
            conn.exec_driver_sql(statement)
        if self.indexed and not was_indexed:
            conn.exec_driver_sql(
                "CREATE VIRTUAL TABLE IF NOT EXISTS adk_vector_knn USING vec0("
                f"scope TEXT PARTITION KEY, embedding bit[{self.dimension}], chunk_size=4096)"
            )
            large = conn.execute(
                sa.text("SELECT scope FROM adk_vector_scopes WHERE chunks > :n"),
                {"n": self.exact_up_to},
            ).all()
            for (scope,) in large:
                conn.execute(_INDEX_SCOPE, {"scope": scope})
                conn.execute(_MARK_INDEXED, {"scope": scope})

    def insert(self, tx: Tx, scope: str, source: str, rows: Sequence[dict[str, Any]]) -> None:
        """Inserts chunks (``key``, ``timestamp``, ``text``, ``vector``) of one source."""
        if not rows:
            return
        chunks, indexed = tx.execute(_COUNT, {"scope": scope, "delta": len(rows)}).fetchone()
        for row in rows:
            params = {
                "scope": scope,
                "source": source,
                "key": row["key"],
                "timestamp": row["timestamp"],
                "text": row["text"],
                "embedding": to_blob(row["vector"]),
            }
            cursor = tx.execute(_INSERT, params)
            if indexed:
                knn = {"id": cursor.lastrowid, "scope": scope, "embedding": params["embedding"]}
                tx.execute(_INSERT_KNN, knn)
        if self.indexed and not indexed and chunks > self.exact_up_to:
            tx.execute(_INDEX_SCOPE, {"scope": scope})  # the scope outgrew the exact scan
            tx.execute(_MARK_INDEXED, {"scope": scope})

    def delete(self, tx: Tx, scope: str, ids: Sequence[int]) -> None:
        """Deletes chunks of ``scope`` by id."""
        if not ids:
            return
        (indexed,) = tx.execute(_COUNT, {"scope": scope, "delta": -len(ids)}).fetchone()[1:]
        rows = [{"id": chunk_id} for chunk_id in ids]
        tx.executemany(_DELETE, rows)
        if indexed:
            tx.executemany(_DELETE_KNN, rows)

    def search(self, tx: Tx, scope: str, vector: Sequence[float], k: int) -> list[Row]:
        """The ``k`` chunks of ``scope`` most similar to ``vector``, most similar first."""
        query = array("f", vector)
        params = {"query": query.tobytes(), "scope": scope, "k": k}
        if not self.indexed:  # no sqlite-vec: every vector of the scope, in Python
            found = tx.execute(_SCAN, params).fetchall()
            scored = [(i, src, ts, text, _cosine(query, blob)) for i, src, ts, text, blob in found]
            return heapq.nsmallest(k, scored, key=lambda row: (-row[4], row[0]))
        if (tx.execute(_IS_INDEXED, params).fetchone() or (0,))[0]:
            params["candidates"] = max(k, self.candidates)
            return [tuple(row) for row in tx.execute(_NEAREST, params).fetchall()]  # type: ignore[misc]
        return [tuple(row) for row in tx.execute(_EXACT, params).fetchall()]  # type: ignore[misc]
