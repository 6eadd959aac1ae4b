"""The PostgreSQL side of the vector store: pgvector when the server has it, SQL otherwise.

* pgvector (the ``vector`` extension is installed in the database, or can be installed by
  this user): the vectors are a ``vector(dim)`` column and the server ranks by its cosine
  distance operator ``<=>``. Searches are scoped to one user, so they read that user's rows
  (a B-tree on the scope) and compute every distance: exact, in C. An approximate index
  (HNSW) would drop rows of the user when the nearest rows of the whole table belong to
  others.
* Otherwise the vectors are a ``real[]`` column and the cosine (a dot product: the vectors
  are unit length) is computed in SQL over the scope's rows. Exact, and fine for the
  thousands of memories one user gathers; install pgvector for more.

Which of the two a database uses is decided when its tables are created, and kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from adk_rx.sessions.sql_engine import Tx

__all__ = ["PostgresVectors", "find_pgvector"]

_INSERT_COLUMNS = "INSERT INTO adk_vector_chunks (scope, source, key, timestamp, text, embedding)"
_DELETE = sa.text("DELETE FROM adk_vector_chunks WHERE id = :id")
_SELECT = "SELECT id, source, timestamp, text"

Row = tuple[int, str, float, str, float]


def find_pgvector(conn: sa.Connection) -> str | None:
    """The schema of the ``vector`` extension, installing it when the server offers it;
    None when pgvector cannot be had (not on the server, or no right to install it)."""
    schema = _extension_schema(conn)
    if schema is not None:
        return schema
    available = conn.exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).first()
    if available is None:
        return None
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
    except sa_exc.DBAPIError:  # e.g. not allowed to create extensions: the SQL path serves
        return None
    return _extension_schema(conn)


def _extension_schema(conn: sa.Connection) -> str | None:
    return conn.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n "
        "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    ).scalar()


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class PostgresVectors:
    """Writes and searches the chunk vectors on PostgreSQL.

    Args:
        pgvector_schema: the schema of the ``vector`` extension, or None for the SQL path.
        dimension: the vector length.
    """

    def __init__(self, *, pgvector_schema: str | None, dimension: int) -> None:
        self.indexed = pgvector_schema is not None
        self.dimension = dimension
        if pgvector_schema is not None:
            # Qualified, so the type and operator resolve whatever the search_path is.
            schema = _quoted(pgvector_schema)
            vector = f"{schema}.vector"
            self._column = f"{vector}({dimension})"
            self._value = f"CAST(:embedding AS {vector})"
            distance = f"embedding OPERATOR({schema}.<=>) CAST(:query AS {vector})"
            self._search = sa.text(
                f"{_SELECT}, 1 - ({distance}) FROM adk_vector_chunks "
                f"WHERE scope = :scope ORDER BY {distance}, id LIMIT :k"
            )
        else:
            self._column = "real[]"
            self._value = "CAST(:embedding AS real[])"
            score = "(SELECT sum(a * b) FROM unnest(embedding, CAST(:query AS real[])) AS t (a, b))"
            self._search = sa.text(
                f"{_SELECT}, {score} AS score FROM adk_vector_chunks "
                "WHERE scope = :scope ORDER BY score DESC, id LIMIT :k"
            )
        self._insert = sa.text(
            f"{_INSERT_COLUMNS} VALUES (:scope, :source, :key, :timestamp, :text, {self._value})"
        )

    def create(self, conn: sa.Connection, *, was_indexed: bool) -> None:
        """Creates the chunk table (its vector column as decided at creation)."""
        conn.exec_driver_sql(
            "CREATE TABLE IF NOT EXISTS adk_vector_chunks ("
            "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, scope TEXT NOT NULL, "
            "source TEXT NOT NULL, key TEXT NOT NULL, timestamp DOUBLE PRECISION NOT NULL, "
            f"text TEXT NOT NULL, embedding {self._column} NOT NULL)"
        )
        conn.exec_driver_sql(
            "CREATE INDEX IF NOT EXISTS adk_vector_chunks_source "
            "ON adk_vector_chunks (scope, source)"
        )

    def _param(self, vector: Sequence[float]) -> Any:
        if self.indexed:
            return "[" + ",".join(repr(float(x)) for x in vector) + "]"
        return [float(x) for x in vector]

    def insert(self, tx: Tx, scope: str, source: str, rows: Sequence[dict[str, Any]]) -> None:
        """Inserts chunks (``key``, ``timestamp``, ``text``, ``vector``) of one source."""
        tx.executemany(
            self._insert,
            [
                {
                    "scope": scope,
                    "source": source,
                    "key": row["key"],
                    "timestamp": row["timestamp"],
                    "text": row["text"],
                    "embedding": self._param(row["vector"]),
                }
                for row in rows
            ],
        )

    def delete(self, tx: Tx, scope: str, ids: Sequence[int]) -> None:
        """Deletes chunks of ``scope`` by id."""
        if ids:
            tx.executemany(_DELETE, [{"id": chunk_id} for chunk_id in ids])

    def search(self, tx: Tx, scope: str, vector: Sequence[float], k: int) -> list[Row]:
        """The ``k`` chunks of ``scope`` most similar to ``vector``, most similar first."""
        params = {"scope": scope, "query": self._param(vector), "k": k}
        rows = tx.execute(self._search, params).fetchall()
        # pgvector's cosine distance to a zero vector is NaN: it is related to nothing.
        return [
            (i, source, ts, text, 0.0 if score is None or math.isnan(score) else float(score))
            for i, source, ts, text, score in rows
        ]
