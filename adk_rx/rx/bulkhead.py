"""Bulkhead: at most N subscriptions of the guarded sources run at once; the rest wait in line.

RxPY has no operator that limits concurrency across independent subscriptions (``merge``'s
``max_concurrent`` limits the inner sources of one stream only). A :class:`Bulkhead` is one
shared limit: every Observable piped through it, from any stream or thread, takes a permit
when it is subscribed and gives it back when it completes, errors or is disposed. Without a
free permit the subscription waits in a first-come, first-served line; disposing a waiting
subscription takes it out of the line, and its source is never subscribed.

Marble diagram (``Bulkhead(1)``; ``a`` and ``b`` subscribed at once, ``c`` when the line is
full with ``max_waiting=1``)::

    a:        --a1--|
    b:        ......--b1--|          (subscribed when a's permit is free)
    c:        X BulkheadFullError    (max_waiting=1: b already waits)
    b disposed while waiting:  ..    (b's source is never subscribed)
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SerialDisposable

from adk_rx.errors import BulkheadFullError, ConfigurationError

__all__ = ["Bulkhead"]

T = TypeVar("T")


class Bulkhead:
    """A limit of ``max_concurrent`` running subscriptions, shared by every source piped
    through it (``source.pipe(bulkhead)``).

    Args:
        max_concurrent: permits: how many guarded subscriptions may run at once (>= 1).
        max_waiting: how many may wait for a permit; one more errors at once with
            BulkheadFullError. None lets any number wait.

    Raises:
        ConfigurationError: ``max_concurrent`` below 1 or ``max_waiting`` below 0.
    """

    def __init__(self, max_concurrent: int, max_waiting: int | None = None) -> None:
        if max_concurrent < 1:
            raise ConfigurationError(f"max_concurrent must be >= 1, got {max_concurrent}")
        if max_waiting is not None and max_waiting < 0:
            raise ConfigurationError(f"max_waiting must be >= 0 or None, got {max_waiting}")
        self.max_concurrent = max_concurrent
        self.max_waiting = max_waiting
        self._lock = threading.Lock()
        self._running = 0
        self._line: deque[_Ticket] = deque()
        self._draining = False

    @property
    def running(self) -> int:
        """Subscriptions holding a permit now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Subscriptions waiting for a permit now."""
        return len(self._line)

    def __call__(self, source: Observable[T]) -> Observable[T]:
        """``source`` guarded by this bulkhead (use as ``source.pipe(bulkhead)``)."""

        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            ticket = _Ticket(self, source, observer, scheduler)
            with self._lock:
                if self._running < self.max_concurrent:
                    self._running += 1
                    ticket.permit = True
                    start = True
                elif self.max_waiting is not None and len(self._line) >= self.max_waiting:
                    start = None
                else:
                    self._line.append(ticket)
                    start = False
            if start is None:
                observer.on_error(
                    BulkheadFullError(
                        f"bulkhead full: {self.max_concurrent} running and "
                        f"{self.max_waiting} waiting"
                    )
                )
                return Disposable()
            if start:
                ticket.start()
            return Disposable(ticket.dispose)

        return Observable(subscribe)

    def _leave_line(self, ticket: _Ticket) -> bool:
        """Takes a waiting ticket out of the line; False when it holds a permit already."""
        with self._lock:
            try:
                self._line.remove(ticket)
            except ValueError:
                return False
            return True

    def _release(self) -> None:
        """Gives a permit back and starts whoever waits, first come first served.

        One thread at a time starts waiters; a source that ends while it is being
        subscribed gives its permit back to the loop below instead of recursing.
        """
        with self._lock:
            self._running -= 1
            if self._draining:
                return
            self._draining = True
        while True:
            with self._lock:
                if self._running >= self.max_concurrent or not self._line:
                    self._draining = False
                    return
                ticket = self._line.popleft()
                self._running += 1
                ticket.permit = True
            ticket.start()

    def __repr__(self) -> str:
        return (
            f"Bulkhead(max_concurrent={self.max_concurrent}, max_waiting={self.max_waiting}, "
            f"running={self._running}, waiting={len(self._line)})"
        )


class _Ticket:
    """One guarded subscription: it waits in line, then runs holding a permit, and gives the
    permit back exactly once (on completion, error or disposal)."""

    __slots__ = (
        "_bulkhead",
        "_disposed",
        "_inner",
        "_lock",
        "_observer",
        "_scheduler",
        "_source",
        "permit",
    )

    def __init__(
        self,
        bulkhead: Bulkhead,
        source: Observable[Any],
        observer: abc.ObserverBase[Any],
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self._bulkhead = bulkhead
        self._source = source
        self._observer = observer
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._disposed = False
        self.permit = False  # set (under the bulkhead's lock) when the ticket gets a permit
        self._inner = SerialDisposable()

    def start(self) -> None:
        """Subscribes the source; called once the ticket holds a permit."""
        with self._lock:
            disposed = self._disposed
        if disposed:  # disposed after it left the line, before it started
            self._give_back()
            return
        observer = self._observer

        def on_error(error: Exception) -> None:
            try:
                observer.on_error(error)
            finally:
                self._give_back()

        def on_completed() -> None:
            try:
                observer.on_completed()
            finally:
                self._give_back()

        try:
            self._inner.disposable = self._source.subscribe(
                observer.on_next, on_error, on_completed, scheduler=self._scheduler
            )
        except Exception as exc:  # a source that raises when subscribed
            on_error(exc)

    def _give_back(self) -> None:
        with self._lock:
            if not self.permit:
                return
            self.permit = False
        self._bulkhead._release()  # pyright: ignore[reportPrivateUsage]

    def dispose(self) -> None:
        with self._lock:
            if self._disposed:
                return
            self._disposed = True
        if self._bulkhead._leave_line(self):  # pyright: ignore[reportPrivateUsage]
            return  # it never ran: nothing to dispose, no permit to give back
        self._inner.dispose()
        self._give_back()
