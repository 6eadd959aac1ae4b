"""A bounded single-consumer buffer that blocks producers: the core of the pull bridges.

Producers call :meth:`Channel.put` from any thread and block while the buffer is full, unless
``can_block()`` says the calling thread must not wait (it is the consumer's own thread, where
waiting would deadlock); such items are buffered beyond the capacity. The consumer polls with
:meth:`Channel.take`; when it finds the buffer empty it is marked waiting and ``wake`` is
called (outside the lock) by the next put, finish or close, exactly once per wait.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

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


class Channel(Generic[T]):
    """The bounded buffer between a pushing producer and a pulling consumer."""

    def __init__(
        self, capacity: int, can_block: Callable[[], bool], wake: Callable[[], None]
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._can_block = can_block
        self._wake = wake
        self._lock = threading.Lock()
        self._not_full = threading.Condition(self._lock)
        self._items: deque[T] = deque()
        self._finished = False
        self._error: Exception | None = None
        self._closed = False
        self._consumer_waiting = False
        self._producers_waiting = 0

    def put(self, item: T) -> None:
        """Adds an item, waiting for room if the calling thread may block."""
        with self._lock:
            if len(self._items) >= self._capacity and not self._closed and self._can_block():
                self._producers_waiting += 1
                try:
                    while len(self._items) >= self._capacity and not self._closed:
                        self._not_full.wait()
                finally:
                    self._producers_waiting -= 1
            if self._closed or self._finished:
                return
            self._items.append(item)
            wake = self._consumer_waiting
            self._consumer_waiting = False
        if wake:
            self._wake()

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
            self._wake()

    def take(self) -> T | _Signal:
        """Removes the oldest item; raises the source's error once the buffer is drained.

        Returns:
            The item, :data:`EMPTY` (the consumer is now marked waiting and will be woken), or
            :data:`END` (the source completed, or the channel was closed).
        """
        with self._lock:
            if self._items:
                item = self._items.popleft()
                if self._producers_waiting:
                    self._not_full.notify()
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
            return EMPTY

    def close(self) -> None:
        """Drops the buffered items and releases every blocked producer for good."""
        with self._lock:
            self._closed = True
            self._items.clear()
            self._not_full.notify_all()

    @property
    def size(self) -> int:
        """The number of buffered items."""
        return len(self._items)
