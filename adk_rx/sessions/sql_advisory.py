"""PostgreSQL turn locks: every advisory lock of a process on one connection, waiting without one.

A turn holds a session-level advisory lock for a whole invocation. Taking it with the
blocking ``pg_advisory_lock`` needs a connection per waiting turn, held for the wait and the
turn: 150 concurrent runs then open 150 connections, more than PostgreSQL's default
``max_connections`` (100), and runs fail with "too many clients". Instead:

* every lock of one :class:`AdvisoryLocks` lives on ONE connection (advisory locks belong to
  the connection that took them, so one connection can hold any number of them);
* a lock another process holds is waited for by polling ``pg_try_advisory_lock`` with
  backoff (5 ms doubling to 100 ms): the wait is a timer, not a thread or a connection;
* within the process, turns on one session queue in order (an advisory lock is re-entrant
  on its connection, so the database alone would let two of them in).

::

    turn A (session s)  --try(s): true ---------------------------- release(s) -->
    turn B (session s)  --queued in process ..........................--try(s): true -->
    other process       --try(s): false --5ms-- false --10ms-- ... -- true -->

The connection is checked lazily: a statement that fails because the connection died
(the server restarted, ``pg_terminate_backend``) reconnects, takes again the locks this
process held (they died with the connection) and runs once more. A lock that another
process took in between cannot be given back; that window is the same as with one
connection per turn.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from reactivex import Observable, abc
from reactivex import create as rx_create
from reactivex.disposable import Disposable, SerialDisposable
from sqlalchemy import exc as sa_exc

from adk_rx.errors import StoreError
from adk_rx.rx import io_scheduler
from adk_rx.rx._engine.loops import on_event_loop
from adk_rx.rx.schedulers import schedule_now, timer_scheduler

__all__ = ["AdvisoryLocks"]

_Key = tuple[str, str, str]
_TRY = sa.text("SELECT pg_try_advisory_lock(:id)")
_UNLOCK = sa.text("SELECT pg_advisory_unlock(:id)")
FIRST_WAIT = 0.005
LONGEST_WAIT = 0.1


class _Ticket:
    """A place in the in-process queue of one session."""

    __slots__ = ("go",)

    def __init__(self, go: Callable[[], None]) -> None:
        self.go = go


class _Queues:
    """Per-key FIFO queues: the first ticket of a key has its turn; leaving passes it on."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._queues: dict[_Key, deque[_Ticket]] = {}

    def enter(self, key: _Key, ticket: _Ticket) -> None:
        """Queues ``ticket``; its ``go`` runs once it is first (at once, if it is)."""
        with self._guard:
            queue = self._queues.setdefault(key, deque())
            queue.append(ticket)
            first = len(queue) == 1
        if first:
            ticket.go()

    def leave(self, key: _Key, ticket: _Ticket) -> None:
        """Gives up the turn or the place in the queue; a second call does nothing."""
        following: _Ticket | None = None
        with self._guard:
            queue = self._queues.get(key)
            if queue is None or ticket not in queue:
                return
            if queue[0] is ticket:
                queue.popleft()
                following = queue[0] if queue else None
            else:
                queue.remove(ticket)
            if not queue:
                del self._queues[key]
        if following is not None:
            following.go()


class AdvisoryLocks:
    """Session turn locks of one process on one PostgreSQL database.

    Args:
        url: the database's URL (normalized).
        scheduler: where the short lock statements run (default: the shared I/O scheduler).
        timer: where waits between attempts are timed (default: adk_rx's timer thread).
    """

    def __init__(
        self,
        url: sa.URL,
        *,
        scheduler: abc.SchedulerBase | None = None,
        timer: abc.SchedulerBase | None = None,
    ) -> None:
        self._engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        self._scheduler = scheduler
        self._timer = timer
        self._guard = threading.Lock()  # one statement at a time on the connection
        self._conn: sa.Connection | None = None
        self._held: Counter[int] = Counter()
        self._queues = _Queues()
        self._closed = False

    def lock(self, key: _Key, lock_id: int) -> Observable[abc.DisposableBase]:
        """A Single: a handle once this process holds ``lock_id`` for ``key``; disposing the
        handle releases it. Disposing the subscription while waiting leaves the queue."""

        def subscribe(
            observer: abc.ObserverBase[abc.DisposableBase], _: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            pending = SerialDisposable()
            guard = threading.Lock()
            state = {"cancelled": False, "delivered": False}

            def release() -> None:
                self._queues.leave(key, ticket)
                if on_event_loop():  # never a blocking statement on an event loop
                    schedule_now(self._io(), lambda *_: self._unlock(lock_id))
                else:  # released when dispose() returns: the end of a run frees it for all
                    self._unlock(lock_id)

            def attempt(wait: float) -> None:
                def work(*_: Any) -> None:
                    if state["cancelled"]:
                        return
                    try:
                        taken = self._try(lock_id)
                    except StoreError as exc:
                        self._queues.leave(key, ticket)
                        observer.on_error(exc)
                        return
                    if not taken:
                        later = min(wait * 2, LONGEST_WAIT)
                        pending.disposable = self._timers().schedule_relative(
                            wait, lambda *_: attempt(later)
                        )
                        return
                    handle = Disposable(release)
                    with guard:
                        if state["cancelled"]:
                            handle.dispose()
                            return
                        state["delivered"] = True
                    observer.on_next(handle)
                    observer.on_completed()

                pending.disposable = schedule_now(self._io(), work)

            ticket = _Ticket(lambda: attempt(FIRST_WAIT))
            self._queues.enter(key, ticket)

            def cancel() -> None:
                with guard:
                    if state["delivered"]:
                        return  # the subscriber owns the handle now
                    state["cancelled"] = True
                pending.dispose()
                self._queues.leave(key, ticket)

            return Disposable(cancel)

        return rx_create(subscribe)

    def try_lock(self, lock_id: int) -> abc.DisposableBase | None:
        """Takes ``lock_id`` without waiting (blocking call): a handle, or None when another
        process holds it. Locks of this process are re-entrant, so a run of this process
        that takes the same lock afterwards gets it at once.

        Raises:
            StoreError: the lock statement failed.
        """
        if not self._try(lock_id):
            return None
        return Disposable(lambda: self._unlock(lock_id))

    def dispose(self) -> None:
        """Closes the lock connection (which drops every lock it holds)."""
        with self._guard:
            conn, self._conn = self._conn, None
            self._held.clear()
            self._closed = True
        if conn is not None:
            conn.close()
        self._engine.dispose()

    # -- the connection ---------------------------------------------------------------------

    def _io(self) -> abc.SchedulerBase:
        return self._scheduler or io_scheduler()

    def _timers(self) -> abc.SchedulerBase:
        return self._timer or timer_scheduler()

    def _try(self, lock_id: int) -> bool:
        with self._guard:
            taken = bool(self._run(_TRY, lock_id))
            if taken:
                self._held[lock_id] += 1
            return taken

    def _unlock(self, lock_id: int) -> None:
        with self._guard:
            if self._closed or self._held[lock_id] <= 0:
                return
            self._held[lock_id] -= 1
            if not self._held[lock_id]:
                del self._held[lock_id]
            with contextlib.suppress(StoreError):  # a dead connection took the lock with it
                self._run(_UNLOCK, lock_id)

    def _run(self, statement: sa.TextClause, lock_id: int) -> Any:
        """Runs one lock statement (under ``_guard``), reconnecting once if the connection
        died; the locks held on a dead connection are taken again on the new one."""
        for last in (False, True):
            try:
                conn = self._connection()
                return conn.execute(statement, {"id": lock_id}).scalar()
            except sa_exc.SQLAlchemyError as exc:
                dead = isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated
                self._drop()
                if last or not dead:
                    raise StoreError(f"the turn lock connection failed: {exc}") from exc
        raise AssertionError("unreachable")

    def _connection(self) -> sa.Connection:
        if self._closed:
            raise sa_exc.InvalidRequestError("the session service was closed")
        if self._conn is None:
            conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            for held in list(self._held):
                conn.execute(_TRY, {"id": held})  # best effort: see the module docstring
            self._conn = conn
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except sa_exc.SQLAlchemyError:
                pass
