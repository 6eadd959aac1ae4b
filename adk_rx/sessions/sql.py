"""SqlSessionService: sessions in SQLite (embedded default) or PostgreSQL (shared by processes).

An append is one short transaction (``sql_append.py``): nothing compares versions or
timestamps, so a writer whose session view is behind (another process appended meanwhile)
never fails: its event simply takes the next sequence number. Reads fetch only the events the
history cache lacks (``sql_cache.py``); turns on one session are ordered across processes by
the store's turn lock (``sql_lock.py``). Every method runs its database work on the shared
I/O scheduler through :func:`adk_rx.rx.from_blocking`, never on the subscribing thread or
event loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.errors import SessionExistsError
from adk_rx.events import Event
from adk_rx.rx import from_blocking
from adk_rx.rx._engine.awaitable import awaitable
from adk_rx.sessions import sql_schema as schema
from adk_rx.sessions import sql_statements as sql
from adk_rx.sessions.base import (
    BaseSessionService,
    check_ids,
    new_session_id,
    split_delta,
    update_view,
)
from adk_rx.sessions.codec import (
    decode_state,
    decode_value,
    encode_event,
    encode_shared,
    encode_state,
)
from adk_rx.sessions.session import (
    GetSessionConfig,
    ListSessionsResponse,
    Session,
    merge_scoped_state,
)
from adk_rx.sessions.sql_append import append_row, write_shared
from adk_rx.sessions.sql_cache import HistoryCache, decode_event
from adk_rx.sessions.sql_engine import Database, Tx
from adk_rx.sessions.sql_lock import TurnLocks
from adk_rx.state import apply_delta

__all__ = ["SqlSessionService"]

_Key = tuple[str, str, str]


class SqlSessionService(BaseSessionService):
    """Stores sessions in a SQL database through SQLAlchemy Core.

    Creating the service does no I/O; the tables are created on first use.

    Args:
        url: ``"sqlite:///path.db"`` or ``"postgresql://user@host/db"`` (psycopg 3 driver).
        scheduler: where blocking database work runs (default: the shared I/O scheduler).
        event_cache_size: decoded events kept in memory across sessions, so a re-read
            fetches only the events it lacks (0 turns the cache off). A decoded event costs
            about 2 KB; the default holds the histories being turned now (100 sessions of
            20 events, 10 of 200), not every session a busy server has seen.
        busy_timeout: seconds a SQLite writer waits for another process's lock.
        pool_size: database connections kept open for reads and appends.
        max_overflow: extra connections opened under load; the store never holds more than
            ``pool_size + max_overflow`` of them (turn locks share one more connection per
            service on PostgreSQL, however many runs hold or wait for them).
        pool_timeout: seconds a read or append waits for a free connection before it fails
            with StoreBusyError (the API server answers 503).
        **engine_options: passed to :func:`sqlalchemy.create_engine` (e.g. ``echo``).

    Raises:
        ConfigurationError: the URL names neither SQLite nor PostgreSQL.
    """

    def __init__(
        self,
        url: str,
        *,
        scheduler: abc.SchedulerBase | None = None,
        event_cache_size: int = 2_000,
        busy_timeout: float = 30.0,
        pool_size: int = 5,
        max_overflow: int = 10,
        pool_timeout: float = 30.0,
        **engine_options: Any,
    ) -> None:
        self._db = Database(
            url,
            busy_timeout=busy_timeout,
            pool_size=pool_size,
            max_overflow=max_overflow,
            pool_timeout=pool_timeout,
            **engine_options,
        )
        self._scheduler = scheduler
        self._history = HistoryCache(event_cache_size)
        self._upserts = sql.Upserts(self._db.is_sqlite)
        self._turns = TurnLocks(self._db.url, is_sqlite=self._db.is_sqlite, scheduler=scheduler)

    @property
    def database(self) -> Database:
        """The engine and transactions this service uses (for sibling stores and tests)."""
        return self._db

    # -- the five methods ------------------------------------------------------------------

    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Observable[Session]:
        """Creates a session; ``app:`` / ``user:`` keys of ``state`` go to their scopes."""

        def create() -> Session:
            check_ids(app_name, user_id)
            sid = new_session_id(session_id)
            scoped = split_delta(state or {})
            own: dict[str, Any] = {}
            apply_delta(own, scoped.session)
            row = {
                "app_name": app_name,
                "user_id": user_id,
                "id": sid,
                "state": encode_state(own),
                "create_time": time.time(),
                "next_seq": 0,
            }
            row["update_time"] = row["create_time"]
            shared = encode_shared(scoped)
            key = {"app": app_name, "user": user_id}
            self._ready()
            with self._db.write("creating a session") as conn:
                if conn.execute(self._upserts.create_session, row).fetchone() is None:
                    raise SessionExistsError(
                        f"session {sid!r} already exists for app {app_name!r}, user {user_id!r}"
                    )
                write_shared(conn, self._upserts, key, shared)
                app_state, user_state = _read_shared(conn, key)
            return Session(
                id=sid,
                app_name=app_name,
                user_id=user_id,
                state=merge_scoped_state(own, app_state, user_state),
                last_update_time=row["update_time"],
            )

        return from_blocking(create, self._scheduler)

    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Observable[Session]:
        """Emits the session with the events ``config`` selects, or completes empty.

        ``num_recent_events=N`` reads only the newest N event rows (``ORDER BY seq DESC
        LIMIT N``); ``after_timestamp`` is filtered in SQL too.
        """

        def get() -> Session | None:
            check_ids(app_name, user_id, session_id)
            self._ready()
            key = {"app": app_name, "user": user_id, "sid": session_id}
            count = None if config is None else config.num_recent_events
            after = None if config is None else config.after_timestamp
            cache_key = (app_name, user_id, session_id)
            prefix, known = self._history.snapshot(cache_key)
            memo = None
            with self._db.read("reading a session") as conn:
                row = conn.execute(sql.READ_SESSION, key).fetchone()
                if row is None:
                    return None
                app_state, user_state = _read_shared(conn, key)
                if config is None:
                    rows, known = _new_rows(conn, key, prefix, known)
                elif count is None or count > 0:
                    query = sql.events_query(limited=count is not None, after=after is not None)
                    rows = conn.execute(query, {**key, "count": count, "after": after}).fetchall()
                else:
                    rows = []
            if config is None:
                events, memo = self._history.extend(cache_key, prefix, known, rows)
            else:
                events = [self._decode(cache_key, seq, eid, body) for seq, eid, body in rows]
            return Session(
                id=session_id,
                app_name=app_name,
                user_id=user_id,
                state=merge_scoped_state(decode_state(row[0]), app_state, user_state),
                events=events,
                last_update_time=row[1],
                memo=memo,
            )

        return _maybe(from_blocking(lambda: self._db.read_retrying(get), self._scheduler))

    def list_sessions(self, *, app_name: str, user_id: str) -> Observable[ListSessionsResponse]:
        """Emits the user's sessions of the app with their state and without events."""

        def list_() -> ListSessionsResponse:
            check_ids(app_name, user_id)
            self._ready()
            key = {"app": app_name, "user": user_id}
            with self._db.read("listing sessions") as conn:
                rows = conn.execute(sql.LIST_SESSIONS, key).fetchall()
                app_state, user_state = _read_shared(conn, key)
            return ListSessionsResponse(
                sessions=[
                    Session(
                        id=row[0],
                        app_name=app_name,
                        user_id=user_id,
                        state=merge_scoped_state(decode_state(row[1]), app_state, user_state),
                        last_update_time=row[2],
                    )
                    for row in rows
                ]
            )

        return from_blocking(lambda: self._db.read_retrying(list_), self._scheduler)

    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> Observable[None]:
        """Deletes the session and its events; deleting a missing session is not an error."""

        def delete() -> None:
            check_ids(app_name, user_id, session_id)
            self._ready()
            key = {"app": app_name, "user": user_id, "sid": session_id}
            with self._db.write("deleting a session") as conn:
                conn.execute(sql.DELETE_EVENTS, key)
                conn.execute(sql.DELETE_SESSION, key)
            self._history.forget((app_name, user_id, session_id))

        return _completable(from_blocking(delete, self._scheduler))

    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        """Stores ``event`` at the session's next sequence number and applies its delta.

        A partial event is emitted back without being stored.

        Raises (as ``on_error``):
            SessionNotFoundError: the session does not exist (deleted meanwhile?).
            StoreError: the database failed; the transaction was rolled back.
        """

        def append() -> Event:
            if event.partial:
                return event
            body = encode_event(event)
            scoped = split_delta(event.actions.state_delta)
            shared = encode_shared(scoped)
            key = {"app": session.app_name, "user": session.user_id, "sid": session.id}
            self._ready()
            with self._db.write("appending an event") as conn:
                seq = append_row(conn, key, event, body, scoped.session)
                write_shared(conn, self._upserts, key, shared)
            self._history.appended((session.app_name, session.user_id, session.id), seq, event)
            update_view(session, event)
            return event

        return from_blocking(append, self._scheduler)

    def lock_session(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[abc.DisposableBase]:
        """Takes the session's turn lock, shared by every process using this database.

        A Single that emits a handle once the lock is held; disposing the handle releases it.
        Hold it for a whole invocation so runs on one session from several processes never
        interleave their events. A process that dies releases its locks. Disposing the
        subscription before the handle arrives cancels the wait.
        """
        return self._turns.lock((app_name, user_id, session_id))

    def try_lock_session(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> abc.DisposableBase | None:
        """Takes the session's turn lock without waiting (a blocking call, run it off the
        event loop): a handle to dispose, or None when another process holds the lock.

        On PostgreSQL a run of this process on the session then takes the lock at once
        (the lock is re-entrant within the process); on SQLite the handle holds nothing.
        Servers use it to answer "busy" instead of queueing behind another process.

        Raises:
            StoreError: the database failed.
        """
        return self._turns.try_lock((app_name, user_id, session_id))

    def close(self) -> None:
        """Closes the pooled database connections."""
        self._turns.dispose()
        self._db.dispose()

    # -- internals -------------------------------------------------------------------------

    def _ready(self) -> None:
        self._db.ensure("sessions", _create_tables)

    def _decode(self, key: _Key, seq: int, event_id: str, body: str) -> Event:
        return self._history.cached(key, seq, event_id) or decode_event(key, seq, body)


def _new_rows(
    conn: Tx, key: dict[str, str], prefix: list[Event], known: int
) -> tuple[Sequence[tuple[int, str, str]], int]:
    """The event rows after the ``known`` cached ones, and how many cached ones still hold.

    The row at ``known - 1`` is read again to check that the cached prefix is still this
    session's (a deleted and re-created session starts from 0 with other ids).
    """
    if known:
        rows = conn.execute(sql.EVENTS_FROM, {**key, "from_seq": known - 1}).fetchall()
        if rows and rows[0][0] == known - 1 and rows[0][1] == prefix[known - 1].id:
            return rows[1:], known
    return conn.execute(sql.events_query(limited=False, after=False), key).fetchall(), 0


def _read_shared(conn: Tx, key: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    scopes: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    for is_user, name, value in conn.execute(sql.READ_SHARED_STATE, key):
        scopes[is_user][name] = decode_value(value)
    return scopes


def _create_tables(conn: sa.Connection) -> None:
    schema.METADATA.create_all(conn)
    schema.check_version(conn, "sessions", schema.SCHEMA_VERSION)


def _maybe(source: Observable[Session | None]) -> Observable[Session]:
    return awaitable(source.pipe(ops.filter(lambda s: s is not None)))  # type: ignore[arg-type]


def _completable(source: Observable[None]) -> Observable[None]:
    return awaitable(source.pipe(ops.ignore_elements()))
