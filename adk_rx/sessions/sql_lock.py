"""Turn locks: one run at a time on a session, across every process that shares the database.

Appends are atomic on their own, but a turn is several appends (the user message, the model's
replies, tool responses). Two processes running turns on one session at once would interleave
them. A turn lock is held for a whole invocation:

* PostgreSQL: a session-level advisory lock keyed by a 64-bit hash of the session key. All
  of a service's locks share one connection and a lock held elsewhere is waited for by
  polling, without a thread or a connection (``sql_advisory.py``). The server drops the
  locks if the process dies, so a killed runner never leaves a session locked.
* SQLite: a byte-range lock (``fcntl.lockf``) at a hashed offset of one sidecar file,
  ``<database>-turns``; the kernel drops it when the process dies. Record locks are owned by
  the process, so threads of one process first queue on an in-process lock per session.
  Without ``fcntl`` (Windows) and for in-memory databases only the in-process lock applies.

On SQLite, waiting blocks a thread of the I/O scheduler, so only waiters that another
process holds back occupy threads (the Runner already queues runs of one process per session).
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any, Protocol

import sqlalchemy as sa
from reactivex import Observable, abc
from reactivex import create as rx_create
from reactivex.disposable import Disposable
from sqlalchemy import exc as sa_exc

from adk_rx.errors import StoreError
from adk_rx.rx import io_scheduler
from adk_rx.rx.schedulers import schedule_now
from adk_rx.sessions.sql_advisory import AdvisoryLocks

try:
    import fcntl
except ImportError:  # Windows: in-process locking only
    fcntl = None

__all__ = ["TurnLocks", "lock_key"]

_Key = tuple[str, str, str]


def lock_key(key: _Key) -> int:
    """A signed 64-bit hash of a session key (PostgreSQL advisory locks take a bigint)."""
    digest = hashlib.blake2b("\0".join(key).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class _Held(Protocol):
    def release(self) -> None: ...


class _KeyedMutex:
    """One in-process lock per session key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[_Key, tuple[threading.Lock, int]] = {}

    def acquire(self, key: _Key) -> None:
        with self._guard:
            lock, users = self._locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._locks[key] = (lock, users + 1)
        lock.acquire()

    def release(self, key: _Key) -> None:
        with self._guard:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
        lock.release()


_MUTEXES: dict[str, _KeyedMutex] = {}
_FILES: dict[str, int] = {}
_REGISTRY_GUARD = threading.Lock()


def _mutex_for(name: str) -> _KeyedMutex:
    with _REGISTRY_GUARD:
        return _MUTEXES.setdefault(name, _KeyedMutex())


def _file_for(path: str) -> int:
    # Kept open for the life of the process: closing any descriptor of a file drops every
    # record lock the process holds on it.
    with _REGISTRY_GUARD:
        fd = _FILES.get(path)
        if fd is None:
            fd = _FILES[path] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        return fd


class _FileHeld:
    def __init__(self, mutex: _KeyedMutex, key: _Key, fd: int | None) -> None:
        self._mutex, self._key, self._fd = mutex, key, fd
        self._offset = lock_key(key) & 0xFFFFFFFFFF  # 40 bits: far below any off_t limit
        if fd is not None and fcntl is not None:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, self._offset, os.SEEK_SET)
            except OSError:
                mutex.release(key)
                raise

    def release(self) -> None:
        try:
            if self._fd is not None and fcntl is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._offset, os.SEEK_SET)
        finally:
            self._mutex.release(self._key)


class TurnLocks:
    """Hands out turn locks for the sessions of one database.

    Args:
        url: the database's URL (already normalized).
        is_sqlite: which kind of lock to use.
        scheduler: where waiting happens (default: the shared I/O scheduler).
    """

    def __init__(
        self, url: sa.URL, *, is_sqlite: bool, scheduler: abc.SchedulerBase | None = None
    ) -> None:
        self._scheduler = scheduler
        self._advisory: AdvisoryLocks | None = None
        self._fd_path: str | None = None
        if is_sqlite:
            database = url.database or ""
            on_disk = database not in ("", ":memory:")
            name = os.path.realpath(database) if on_disk else f"memory:{id(self)}"
            self._mutex = _mutex_for(name)
            self._fd_path = f"{name}-turns" if on_disk and fcntl is not None else None
        else:
            self._mutex = _KeyedMutex()
            self._advisory = AdvisoryLocks(url, scheduler=scheduler)

    def acquire(self, key: _Key) -> _Held:
        """Blocks until this caller holds the turn lock of ``key`` (SQLite)."""
        try:
            self._mutex.acquire(key)
            fd = None if self._fd_path is None else _file_for(self._fd_path)
            return _FileHeld(self._mutex, key, fd)
        except (sa_exc.SQLAlchemyError, OSError) as exc:
            raise StoreError(f"taking the turn lock of session {key[2]!r} failed: {exc}") from exc

    def lock(self, key: _Key) -> Observable[abc.DisposableBase]:
        """A Single that emits a handle once the lock is held; disposing the handle releases it.

        Disposing the subscription while waiting gives the lock back as soon as it arrives.
        """
        if self._advisory is not None:
            return self._advisory.lock(key, lock_key(key))

        def subscribe(
            observer: abc.ObserverBase[abc.DisposableBase], _: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            cancelled, delivered = threading.Event(), threading.Event()
            guard = threading.Lock()

            def work(*_: Any) -> None:
                try:
                    held = self.acquire(key)
                except Exception as exc:
                    observer.on_error(exc)
                    return
                handle = Disposable(held.release)
                if cancelled.is_set():
                    handle.dispose()
                    return
                observer.on_next(handle)
                # A dispose that raced with on_next may have dropped the handle: give the
                # lock back rather than leak it (the handle is idempotent).
                with guard:
                    if cancelled.is_set():
                        handle.dispose()
                        return
                    delivered.set()
                observer.on_completed()

            scheduled = schedule_now(self._scheduler or io_scheduler(), work)

            def cancel() -> None:
                with guard:
                    if delivered.is_set():
                        return  # the subscriber owns the handle now
                    cancelled.set()
                scheduled.dispose()

            return Disposable(cancel)

        return rx_create(subscribe)

    def try_lock(self, key: _Key) -> abc.DisposableBase | None:
        """PostgreSQL: takes the turn lock of ``key`` without waiting (blocking call); None
        when another process holds it. SQLite: always a no-op handle (the in-process
        check of the caller is all there is to do without waiting).

        Raises:
            StoreError: the lock statement failed.
        """
        if self._advisory is None:
            return Disposable()
        return self._advisory.try_lock(lock_key(key))

    def dispose(self) -> None:
        """Closes the lock connection (PostgreSQL)."""
        if self._advisory is not None:
            self._advisory.dispose()
