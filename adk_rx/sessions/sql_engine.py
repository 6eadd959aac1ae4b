"""One SQLAlchemy engine with the transaction discipline the SQL stores share.

* URLs: ``sqlite:///path.db`` and ``postgresql://...`` (mapped to the psycopg 3 driver,
  ``postgresql+psycopg://``; ``postgres://`` is accepted too).
* SQLite: WAL journal, ``synchronous=NORMAL`` (a killed process loses nothing committed; a
  power cut may lose the last commits), a busy timeout for other processes, and
  ``BEGIN IMMEDIATE`` for every write so a writer takes the lock up front instead of
  failing when it upgrades. Writers of one process also queue on a process-wide lock per
  database file, so threads wait on a cheap Python lock rather than in SQLite's busy loop.
* PostgreSQL: reads run in ``REPEATABLE READ`` so a session's row, its shared state and its
  events come from one snapshot; writers lock the rows they change.
* Every driver error leaves as :class:`~adk_rx.errors.StoreError` (``raise ... from exc``),
  after the transaction was rolled back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event as sa_event
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import StaticPool

from adk_rx.errors import ConfigurationError, StoreError

__all__ = ["Database", "normalize_url"]

_BEGIN_OPTION = "adk_rx_begin"
_FILE_LOCKS: dict[str, threading.Lock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def normalize_url(url: str | sa.URL) -> sa.URL:
    """Parses ``url`` and picks the psycopg 3 driver for plain PostgreSQL URLs.

    Raises:
        ConfigurationError: the URL is malformed or names a database other than SQLite or
            PostgreSQL.
    """
    try:
        parsed = sa.make_url(url)
    except sa_exc.ArgumentError as exc:
        raise ConfigurationError(f"not a database URL: {url!r}") from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///path.db or "
            "postgresql://user@host/db"
        )
    return parsed


def _file_lock(path: str) -> threading.Lock:
    key = os.path.realpath(path)
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.Lock())


class Database:
    """An engine plus ``read()`` / ``write()`` transactions and one-time schema setup.

    Args:
        url: ``sqlite:///path.db`` or ``postgresql://...``.
        busy_timeout: seconds a SQLite writer waits for another process's lock.
        engine_options: passed to :func:`sqlalchemy.create_engine` (``pool_size``,
            ``echo``, ...); they win over the defaults chosen here.
    """

    def __init__(
        self, url: str | sa.URL, *, busy_timeout: float = 30.0, **engine_options: Any
    ) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        options = dict(engine_options)
        self._write_lock: threading.Lock | None = None
        self._read_lock: threading.Lock | None = None
        if self.is_sqlite:
            database = self.url.database or ""
            if database in ("", ":memory:"):
                # One shared connection, so every thread sees the same in-memory database;
                # it cannot serve two transactions at once, so reads queue like writes.
                options.setdefault("poolclass", StaticPool)
                options.setdefault("connect_args", {"check_same_thread": False})
                self._write_lock = self._read_lock = threading.Lock()
            else:
                self._write_lock = _file_lock(database)
        self.engine = sa.create_engine(self.url, **options)
        if self.is_sqlite:
            self._install_sqlite_hooks(busy_timeout)
        self._ready: set[str] = set()
        self._ready_lock = threading.Lock()

    def _install_sqlite_hooks(self, busy_timeout: float) -> None:
        timeout_ms = int(busy_timeout * 1000)

        @sa_event.listens_for(self.engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            # Autocommit at the driver level: the stdlib module otherwise issues its own
            # deferred BEGIN, and we need BEGIN IMMEDIATE for writes.
            dbapi_conn.isolation_level = None
            cursor = dbapi_conn.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {timeout_ms}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.close()

        @sa_event.listens_for(self.engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            conn.exec_driver_sql(conn.get_execution_options().get(_BEGIN_OPTION, "BEGIN"))

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def write(self, what: str) -> Iterator[sa.Connection]:
        """A write transaction: committed on exit, rolled back on any exception.

        Args:
            what: names the operation in the StoreError a driver failure becomes.
        """
        lock = self._write_lock or nullcontext()
        with lock, _translated(what), self.engine.connect() as conn:
            if self.is_sqlite:
                conn.execution_options(**{_BEGIN_OPTION: "BEGIN IMMEDIATE"})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self, what: str) -> Iterator[sa.Connection]:
        """A read-only transaction over one snapshot."""
        lock: AbstractContextManager[Any] = self._read_lock or nullcontext()
        with lock, _translated(what), self.engine.connect() as conn:
            if not self.is_sqlite:
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def ensure(self, component: str, setup: Callable[[sa.Connection], None]) -> None:
        """Runs ``setup`` once per process and component, in a write transaction.

        ``setup`` creates tables if they are missing; on PostgreSQL it runs under an advisory
        lock so processes starting together do not race to create the same tables.
        """
        if component in self._ready:
            return
        with self._ready_lock:
            if component in self._ready:
                return
            with self.write(f"creating the {component} tables") as conn:
                if not self.is_sqlite:
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(0x61646B5F7278)))
                setup(conn)
            self._ready.add(component)

    def dispose(self) -> None:
        """Closes the pooled connections."""
        self.engine.dispose()


@contextmanager
def _translated(what: str) -> Iterator[None]:
    try:
        yield
    except sa_exc.SQLAlchemyError as exc:
        raise StoreError(f"{what} failed: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__
