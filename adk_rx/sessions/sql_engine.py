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
  after the transaction was rolled back, and so does a connection the server refuses (the
  role may not log in). No connection to be had (the pool stayed exhausted for
  ``pool_timeout``, or the server refused one: too many clients) is
  :class:`~adk_rx.errors.StoreBusyError`. An error raised inside a transaction leaves as
  itself, even when the rollback fails on a connection that died.
* Connections: the pool is bounded (``pool_size`` + ``max_overflow``); PostgreSQL connections
  are checked on checkout (``pool_pre_ping``), so a pool whose connections the server dropped
  (a restart, ``pg_terminate_backend``) reconnects instead of failing the next request, and
  :meth:`Database.read_retrying` runs a read once more when its connection died under it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event as sa_event
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import StaticPool

from adk_rx.errors import ConfigurationError, StoreBusyError, StoreError

__all__ = ["Database", "Tx", "normalize_url"]

T = TypeVar("T")

_BEGIN_OPTION = "adk_rx_begin"
_FILE_LOCKS: dict[str, threading.Lock] = {}
_FILE_LOCKS_GUARD = threading.Lock()
# The SQLite library (DB-API module) each database file is open through in this process, and
# by how many Databases.
_FILE_DRIVERS: dict[str, tuple[str, int]] = {}


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


def _file_lock(path: str, driver: str = "sqlite3") -> threading.Lock:
    key = os.path.realpath(path)
    with _FILE_LOCKS_GUARD:
        # Two copies of SQLite in one process (the standard library's and pysqlite3's) do not
        # see each other's POSIX locks: closing one drops the other's, and the file can be
        # corrupted (sqlite.org, "How To Corrupt", 2.2). One file, one library.
        other, users = _FILE_DRIVERS.get(key, (driver, 0))
        if other != driver and users > 0:
            raise ConfigurationError(
                f"{path} is already open through {other} in this process; opening it through "
                f"{driver} too could corrupt it: use another database file"
            )
        _FILE_DRIVERS[key] = (driver, users + 1 if other == driver else 1)
        return _FILE_LOCKS.setdefault(key, threading.Lock())


def _release_file(path: str) -> None:
    key = os.path.realpath(path)
    with _FILE_LOCKS_GUARD:
        driver, users = _FILE_DRIVERS.get(key, ("", 0))
        if users > 1:
            _FILE_DRIVERS[key] = (driver, users - 1)
        else:
            _FILE_DRIVERS.pop(key, None)


class Database:
    """An engine plus ``read()`` / ``write()`` transactions and one-time schema setup.

    Args:
        url: ``sqlite:///path.db`` or ``postgresql://...``.
        busy_timeout: seconds a SQLite writer waits for another process's lock.
        pool_size: connections kept open.
        max_overflow: connections opened beyond ``pool_size`` under load (closed when
            returned); at most ``pool_size + max_overflow`` are open at once.
        pool_timeout: seconds a transaction waits for a free connection before it fails
            with StoreBusyError.
        engine_options: passed to :func:`sqlalchemy.create_engine` (``echo``, ...); they
            win over the defaults chosen here.
    """

    def __init__(
        self,
        url: str | sa.URL,
        *,
        busy_timeout: float = 30.0,
        pool_size: int = 5,
        max_overflow: int = 10,
        pool_timeout: float = 30.0,
        **engine_options: Any,
    ) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        if pool_size < 1 or max_overflow < 0 or pool_timeout < 0:
            raise ConfigurationError(
                f"pool_size must be >= 1, max_overflow and pool_timeout >= 0; got "
                f"{pool_size}, {max_overflow}, {pool_timeout}"
            )
        options = dict(engine_options)
        self._file: str | None = None  # a SQLite file, released by dispose()
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
                module = options.get("module")
                driver = getattr(module, "__name__", "sqlite3") if module else "sqlite3"
                self._write_lock = _file_lock(database, driver)
                self._file = database
        if options.get("poolclass") is None:
            options.setdefault("pool_size", pool_size)
            options.setdefault("max_overflow", max_overflow)
            options.setdefault("pool_timeout", pool_timeout)
        if not self.is_sqlite:
            options.setdefault("pool_pre_ping", True)
        self.engine = sa.create_engine(self.url, **options)
        if self.is_sqlite:
            self._install_sqlite_hooks(busy_timeout)
        self._compiler = _Compiler(self.engine.dialect)
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
            # Straight to the driver: this runs for every transaction, and SQLAlchemy's
            # statement machinery would double its cost.
            begin = conn.get_execution_options().get(_BEGIN_OPTION, "BEGIN")
            conn.connection.driver_connection.execute(begin)  # type: ignore[union-attr]

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def write(self, what: str) -> Iterator[Tx]:
        """A write transaction: committed on exit, rolled back on any exception.

        Args:
            what: names the operation in the StoreError a driver failure becomes.
        """
        with (
            self._write_lock or nullcontext(),
            self._transaction(what, "BEGIN IMMEDIATE", None) as tx,
        ):
            yield tx

    @contextmanager
    def read(self, what: str) -> Iterator[Tx]:
        """A read-only transaction over one snapshot."""
        with (
            self._read_lock or nullcontext(),
            self._transaction(what, "BEGIN", "REPEATABLE_READ") as tx,
        ):
            yield tx

    def read_retrying(self, fn: Callable[[], T]) -> T:
        """Runs ``fn`` (reads only: it must be safe to run twice) and, when its connection
        died under it, once more on a fresh connection."""
        try:
            return fn()
        except _Disconnected:
            return fn()

    @contextmanager
    def _transaction(self, what: str, sqlite_begin: str, pg_isolation: str | None) -> Iterator[Tx]:
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        try:
            raw = self.engine.raw_connection()
        except (sa_exc.SQLAlchemyError, dbapi_error) as exc:
            # The pool connects through the driver itself: only engine.connect() wraps its
            # errors, so a connection the server refuses arrives as the driver's own error.
            raise _no_connection(what, exc) from exc
        conn: Any = raw.driver_connection
        isolation = None
        try:
            if self.is_sqlite:
                conn.execute(sqlite_begin)
            elif pg_isolation is not None:
                import psycopg  # only PostgreSQL needs it

                isolation = conn.isolation_level
                conn.isolation_level = psycopg.IsolationLevel[pg_isolation]
            yield Tx(conn, self._compiler)
            conn.execute("COMMIT") if self.is_sqlite else conn.commit()
        except dbapi_error as exc:
            raw.invalidate()  # a connection that failed mid-transaction is not reused
            dead = self.engine.dialect.is_disconnect(exc, conn, None)
            message = f"{what} failed: {_first_line(exc)}"
            raise (_Disconnected if dead else StoreError)(message) from exc
        except BaseException:
            with _invalidated_on(dbapi_error, raw):  # the error in flight says more
                if self.is_sqlite:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                else:
                    conn.rollback()
            raise
        finally:
            if pg_isolation is not None and not self.is_sqlite and raw.is_valid:
                with _invalidated_on(dbapi_error, raw):
                    conn.isolation_level = isolation
            raw.close()

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
            what = f"creating the {component} tables"
            with (
                self._write_lock or nullcontext(),
                _translated(what),
                self.engine.connect() as conn,
            ):
                if self.is_sqlite:
                    conn.execution_options(**{_BEGIN_OPTION: "BEGIN IMMEDIATE"})
                with conn.begin():
                    if not self.is_sqlite:
                        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(0x61646B5F7278)))
                    setup(conn)
            self._ready.add(component)

    def dispose(self) -> None:
        """Closes the pooled connections."""
        self.engine.dispose()
        if self._file is not None:
            _release_file(self._file)
            self._file = None


class Tx:
    """One transaction on a pooled driver connection.

    Statements are SQLAlchemy Core objects compiled once per dialect and then run on the
    driver connection itself: SQLAlchemy's per-execution machinery costs several times what
    SQLite needs to run these statements.
    """

    __slots__ = ("_compiler", "_conn")

    def __init__(self, conn: Any, compiler: _Compiler) -> None:
        self._conn = conn
        self._compiler = compiler

    def execute(self, statement: sa.Executable, params: Mapping[str, Any] | None = None) -> Any:
        """Runs ``statement`` with ``params``; returns the driver's cursor (tuples)."""
        sql, to_args = self._compiler(statement)
        return self._conn.execute(sql, to_args(params or {}))

    def executemany(self, statement: sa.Executable, rows: Sequence[Mapping[str, Any]]) -> None:
        """Runs ``statement`` once per row."""
        sql, to_args = self._compiler(statement)
        self._conn.cursor().executemany(sql, [to_args(row) for row in rows])


class _Compiler:
    """Compiles Core statements once for a dialect; maps named params to driver arguments."""

    def __init__(self, dialect: sa.Dialect) -> None:
        self._dialect = dialect
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[sa.Executable, str, Callable[[Mapping[str, Any]], Any]]] = {}

    def __call__(self, statement: sa.Executable) -> tuple[str, Callable[[Mapping[str, Any]], Any]]:
        entry = self._cache.get(id(statement))
        if entry is None or entry[0] is not statement:
            entry = (statement, *self._compile(statement))
            with self._lock:
                self._cache[id(statement)] = entry
        return entry[1], entry[2]

    def _compile(self, statement: sa.Executable) -> tuple[str, Callable[[Mapping[str, Any]], Any]]:
        compiled = statement.compile(dialect=self._dialect)  # type: ignore[attr-defined]
        # Literal values rendered as parameters (e.g. sa.literal(0)) keep their value.
        fixed = {k: v for k, v in compiled.params.items() if v is not None}
        if self._dialect.positional:
            names = tuple(compiled.positiontup or ())

            def positional(params: Mapping[str, Any]) -> Any:
                return tuple(params[n] if n in params else fixed[n] for n in names)

            return str(compiled), positional
        names = tuple(compiled.params)  # the rendered parameter names

        def named(params: Mapping[str, Any]) -> Any:
            return {n: params[n] if n in params else fixed[n] for n in names}

        return str(compiled), named


class _Disconnected(StoreError):
    """The connection died during the transaction (nothing was committed)."""


def _no_connection(what: str, exc: Exception) -> StoreError:
    """The error for a connection that could not be had: busy (pool, server) or failed.

    ``exc`` is SQLAlchemy's (the pool timed out) or the driver's (the server refused)."""
    text = _first_line(exc)
    orig = getattr(exc, "orig", exc)
    too_many = getattr(orig, "sqlstate", None) == "53300" or "too many clients" in text
    if isinstance(exc, sa_exc.TimeoutError) or too_many:
        return StoreBusyError(f"{what} failed: no database connection available ({text})")
    return StoreError(f"{what} failed: {text}")


@contextmanager
def _invalidated_on(error: type[Exception], raw: Any) -> Iterator[None]:
    """Ends a transaction's use of ``raw``: when the driver fails there (the connection died
    after the transaction failed or committed), the connection is dropped from the pool
    rather than the driver's error raised."""
    try:
        yield
    except error:
        raw.invalidate()


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
