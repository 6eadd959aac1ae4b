"""A bounded single-consumer buffer that blocks producers: the core of the pull bridges.

Producers call :meth:`Channel.put` from any thread and block while the buffer is full, unless
``can_block()`` says the calling thread must not wait (it is the consumer's own thread, where
waiting would deadlock); such items are buffered beyond the capacity. The consumer polls with
:meth:`Channel.take`; when it finds the buffer empty it is marked waiting (``wait_begins()``,
under the lock) and ``wake()`` is called (outside the lock) by the next put or finish, exactly
once per wait.

A channel is itself the observer of its source (``on_next`` puts, ``on_error`` and
``on_completed`` finish), and a subclass says how its consumer waits: one object per bridge,
with no closures around it. Its condition for blocked producers is made only when a producer
first has to wait: a channel whose consumer keeps up (the usual case) never makes one.

A consumer that leaves closes the channel, and it disposes the subscription; but a source
subscribed on another thread gives its disposable only when its ``subscribe()`` returns, and
a producer it started meanwhile would run on unchecked, its items dropped. So a channel closed
before the source was told (``close(released=False)``) makes such a producer wait in ``put``
until :meth:`Channel.release` says the disposal reached the source. The thread that will
release it (:meth:`Channel.may_wait_released`) and a thread running an event loop never wait
for that: their items are dropped.

A producer on an event loop never waits: a :func:`~adk_rx.rx.from_async` pump is paused
instead (its item is buffered, and it pulls no further item until the buffer has room, or
until the release after a close); any other producer there is handled as before.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any, Generic, TypeVar

from reactivex import abc

from adk_rx.rx._engine.loops import pausing_pump, resume

__all__ = ["EMPTY", "END", "Channel"]

T = TypeVar("T")


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


EMPTY = _Signal("EMPTY")
"""Returned by :meth:`Channel.take` when nothing is buffered yet (the consumer must wait)."""

END = _Signal("END")
"""Returned by :meth:`Channel.take` once the source completed and every item was taken."""


# What a channel holds before its first item: shared and never appended to (a consumer that
# waits before anything came, as a run's consumer waiting on its model does, makes no deque).
_NO_ITEMS: deque[Any] = deque()


class Channel(abc.ObserverBase[T], Generic[T]):
    """The bounded buffer between a pushing producer and a pulling consumer.

    Subclasses give :meth:`can_block` and :meth:`wake`, and may prepare a wait in
    :meth:`wait_begins`.
    """

    __slots__ = (
        "_capacity",
        "_closed",
        "_consumer_waiting",
        "_error",
        "_finished",
        "_items",
        "_lock",
        "_not_full",
        "_pauses",
        "_producers_waiting",
        "_released",
    )

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._lock = threading.Lock()
        self._not_full: threading.Condition | None = None  # made when a producer must wait
        self._items: deque[T] = _NO_ITEMS  # its own deque is made by the first put
        self._finished = False
        self._error: Exception | None = None
        self._closed = False
        self._consumer_waiting = False
        self._producers_waiting = 0
        self._released = False  # whether the source was told of a close (see the docstring)
        self._pauses: list[asyncio.Future[None]] | None = None  # of pumps paused on this

    def can_block(self) -> bool:
        """Whether the calling thread may wait for room (never the consumer's own)."""
        raise NotImplementedError

    def wait_begins(self) -> None:
        """Called under the lock when the consumer finds nothing: the next put or finish
        calls :meth:`wake` for this wait."""

    def wake(self) -> None:
        """Wakes the waiting consumer (called outside the lock, once per wait)."""
        raise NotImplementedError

    def may_wait_released(self) -> bool:
        """Whether the calling thread may wait, after a close, for :meth:`release` (never the
        thread that will release it); False by default."""
        return False

    def put(self, value: T) -> None:
        """Adds an item, waiting for room if the calling thread may block."""
        with self._lock:
            if len(self._items) >= self._capacity or self._closed:
                self._make_room()
            if self._closed or self._finished:
                return
            items = self._items
            if items is _NO_ITEMS:
                items = self._items = deque()
            items.append(value)
            wake = self._consumer_waiting
            self._consumer_waiting = False
        if wake:
            self.wake()

    def _make_room(self) -> None:
        """(Under the lock; full or closed.) A pump on an event loop is paused; a producer
        that may block waits while the buffer is full and, once closed, until released."""
        pump = pausing_pump()
        if pump is not None:
            if not (self._closed and self._released):
                if self._pauses is None:
                    self._pauses = []
                self._pauses.append(pump.pause())
            return
        if not self.can_block():
            return
        not_full = self._not_full
        if not_full is None:
            not_full = self._not_full = threading.Condition(self._lock)
        self._producers_waiting += 1
        try:
            while len(self._items) >= self._capacity and not self._closed:
                not_full.wait()
            if self._closed and not self._released and self.may_wait_released():
                while not self._released:
                    not_full.wait()
        finally:
            self._producers_waiting -= 1

    def finish(self, error: Exception | None = None) -> None:
        """Marks the end of the source; the consumer sees it after the buffered items."""
        with self._lock:
            if self._closed or self._finished:
                return
            self._finished = True
            self._error = error
            wake = self._consumer_waiting
            self._consumer_waiting = False
        if wake:
            self.wake()

    on_next = put
    on_error = finish
    on_completed = finish

    def take(self) -> T | _Signal:
        """Removes the oldest item; raises the source's error once the buffer is drained.

        Returns:
            The item, :data:`EMPTY` (the consumer is now marked waiting and will be woken), or
            :data:`END` (the source completed, or the channel was closed).
        """
        with self._lock:
            if self._items:
                item = self._items.popleft()
                if self._producers_waiting and self._not_full is not None:
                    self._not_full.notify()
                if self._pauses and len(self._items) < self._capacity:
                    resume(self._pauses)
                return item
            if self._closed:
                return END
            if self._finished:
                error, self._error = self._error, None
                self._closed = True
                if error is not None:
                    raise error
                return END
            self._consumer_waiting = True
            self.wait_begins()
            return EMPTY

    def close(self, released: bool = True) -> None:
        """Drops the buffered items; every producer's item is dropped from now on.

        Args:
            released: whether the source was told already (its subscription disposed). If
                not, a producer that may wait (:meth:`may_wait_released`) waits in ``put``
                until :meth:`release`.
        """
        with self._lock:
            self._closed = True
            if released:
                self._released = True
                if self._pauses:
                    resume(self._pauses)
            self._items.clear()
            if self._not_full is not None:
                self._not_full.notify_all()

    def release(self) -> None:
        """Lets the producers waiting on a closed channel go (their items are dropped)."""
        with self._lock:
            self._released = True
            if self._pauses:
                resume(self._pauses)
            if self._not_full is not None:
                self._not_full.notify_all()

    @property
    def size(self) -> int:
        """The number of buffered items."""
        return len(self._items)
