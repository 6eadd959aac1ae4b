"""SqlMemoryService: remembered sessions in SQLite or PostgreSQL, found by full-text search.

Each text event of an added session is one row of ``adk_memory``; the database's own
full-text index finds them:

* SQLite: an FTS5 index over the rows (external content, kept in sync by triggers), with the
  Porter stemmer, so "names" finds "name";
* PostgreSQL: a stored ``tsvector`` column (``english`` configuration) with a GIN index.

A query matches a row that shares at least one word with it (case and punctuation do not
matter, as in :class:`~adk_rx.memory.in_memory.InMemoryMemoryService`); query text is reduced
to words first, so search syntax in a query is never interpreted. Results keep the order in
which sessions were added and, within a session, the order of its events.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.memory.in_memory import words
from adk_rx.rx import from_blocking
from adk_rx.sessions.session import Session
from adk_rx.sessions.sql_engine import Database
from adk_rx.sessions.sql_schema import SCHEMA_VERSIONS, check_version

__all__ = ["SqlMemoryService"]

SCHEMA_VERSION = 1

_METADATA = sa.MetaData()
_MEMORY = sa.Table(
    "adk_memory",
    _METADATA,
    # INTEGER on SQLite makes the column the rowid, which the FTS5 index refers to.
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("app_name", sa.String(256), nullable=False),
    sa.Column("user_id", sa.String(256), nullable=False),
    sa.Column("session_id", sa.String(256), nullable=False),
    sa.Column("author", sa.String(256), nullable=False),
    sa.Column("timestamp", sa.Double, nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Index("adk_memory_session", "app_name", "user_id", "session_id"),
)

_SQLITE_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS adk_memory_fts USING fts5("
    "text, content='adk_memory', content_rowid='id', tokenize='porter unicode61')",
    "CREATE TRIGGER IF NOT EXISTS adk_memory_fts_insert AFTER INSERT ON adk_memory BEGIN "
    "INSERT INTO adk_memory_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER IF NOT EXISTS adk_memory_fts_delete AFTER DELETE ON adk_memory BEGIN "
    "INSERT INTO adk_memory_fts(adk_memory_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "END",
)
_POSTGRES_DDL = (
    "ALTER TABLE adk_memory ADD COLUMN IF NOT EXISTS tsv tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX IF NOT EXISTS adk_memory_tsv ON adk_memory USING GIN (tsv)",
)
_SQLITE_SEARCH = sa.text(
    "SELECT m.author, m.timestamp, m.content FROM adk_memory_fts "
    "JOIN adk_memory AS m ON m.id = adk_memory_fts.rowid "
    "WHERE adk_memory_fts MATCH :query AND m.app_name = :app AND m.user_id = :user "
    "ORDER BY m.id"
)
_POSTGRES_SEARCH = sa.text(
    "SELECT author, timestamp, content FROM adk_memory "
    "WHERE tsv @@ to_tsquery('english', :query) AND app_name = :app AND user_id = :user "
    "ORDER BY id"
)
_FORGET = sa.delete(_MEMORY).where(
    _MEMORY.c.app_name == sa.bindparam("app"),
    _MEMORY.c.user_id == sa.bindparam("user"),
    _MEMORY.c.session_id == sa.bindparam("sid"),
)
_REMEMBER = sa.insert(_MEMORY).values(
    {column.name: sa.bindparam(column.name) for column in _MEMORY.columns if column.name != "id"}
)


class SqlMemoryService(BaseMemoryService):
    """Long-term memory in a SQL database, scoped to an app and a user.

    Creating the service does no I/O; the tables are created on first use.

    Args:
        url: ``"sqlite:///path.db"`` or ``"postgresql://user@host/db"``; it may be the
            database of a :class:`~adk_rx.sessions.sql.SqlSessionService`.
        scheduler: where blocking database work runs (default: the shared I/O scheduler).
        **engine_options: passed to :func:`sqlalchemy.create_engine`.
    """

    def __init__(
        self, url: str, *, scheduler: abc.SchedulerBase | None = None, **engine_options: Any
    ) -> None:
        self._db = Database(url, **engine_options)
        self._scheduler = scheduler

    def add_session_to_memory(self, session: Session) -> Observable[None]:
        """Remembers the session's text events, replacing what was remembered of it before."""

        def add() -> None:
            key = {"app": session.app_name, "user": session.user_id, "sid": session.id}
            rows = _rows(session)
            self._ready()
            with self._db.write("adding a session to memory") as conn:
                conn.execute(_FORGET, key)
                if rows:
                    conn.executemany(_REMEMBER, rows)

        return from_blocking(add, self._scheduler).pipe(ops.ignore_elements())

    def delete_session_memories(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Forgets what was remembered of the session."""

        def forget() -> None:
            self._ready()
            with self._db.write("forgetting a session") as conn:
                conn.execute(_FORGET, {"app": app_name, "user": user_id, "sid": session_id})

        return from_blocking(forget, self._scheduler).pipe(ops.ignore_elements())

    def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> Observable[SearchMemoryResponse]:
        """Emits the remembered entries of this app and user that share a word with ``query``."""

        def search() -> SearchMemoryResponse:
            wanted = sorted(words(query))
            if not wanted:
                return SearchMemoryResponse()
            if self._db.is_sqlite:
                statement = _SQLITE_SEARCH
                expression = " OR ".join(f'"{word}"' for word in wanted)
            else:
                statement = _POSTGRES_SEARCH
                expression = " | ".join(wanted)
            self._ready()
            params = {"query": expression, "app": app_name, "user": user_id}
            with self._db.read("searching memory") as conn:
                rows = conn.execute(statement, params).fetchall()
            return SearchMemoryResponse(memories=[_entry(*row) for row in rows])

        return from_blocking(search, self._scheduler)

    def close(self) -> None:
        """Closes the pooled database connections."""
        self._db.dispose()

    def _ready(self) -> None:
        self._db.ensure("memory", self._create_tables)

    def _create_tables(self, conn: sa.Connection) -> None:
        _METADATA.create_all(conn)
        SCHEMA_VERSIONS.create(conn, checkfirst=True)
        for statement in _SQLITE_DDL if self._db.is_sqlite else _POSTGRES_DDL:
            conn.exec_driver_sql(statement)
        check_version(conn, "memory", SCHEMA_VERSION)


def _rows(session: Session) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for event in session.events:
        content = event.content
        if event.partial or content is None or not content.parts:
            continue  # a partial event is a fragment of one stored whole
        # Only text is searchable; events with none (function calls, blobs) are skipped.
        text = " ".join(part.text for part in content.parts if part.text)
        if not text:
            continue
        rows.append(
            {
                "app_name": session.app_name,
                "user_id": session.user_id,
                "session_id": session.id,
                "author": event.author,
                "timestamp": event.timestamp,
                "content": content.model_dump_json(exclude_none=True),
                "text": text,
            }
        )
    return rows


def _entry(author: str, timestamp: float, content: str) -> MemoryEntry:
    return MemoryEntry(
        content=types.Content.model_validate_json(content),
        author=author,
        timestamp=datetime.fromtimestamp(timestamp, tz=UTC).isoformat(),
    )
