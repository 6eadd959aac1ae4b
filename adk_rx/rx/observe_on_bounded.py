"""``observe_on_bounded``: the bounded, batch-draining replacement for ``observe_on``.

Stock ``observe_on`` queues without bound, dequeues in O(n) and schedules one hop per item,
and an exception in the consumer kills an ``EventLoopScheduler`` thread. Here the producer
appends to a bounded deque and a drain is scheduled only on the idle -> busy transition; the
drain delivers up to a batch of items and re-schedules itself, so it never monopolises a
shared scheduler. A consumer exception becomes ``on_error`` and the scheduler survives.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SerialDisposable, SingleAssignmentDisposable
from reactivex.scheduler import EventLoopScheduler

from adk_rx.errors import BackpressureError
from adk_rx.rx._engine.loops import on_event_loop
from adk_rx.rx.overflow import BOUNDED_STRATEGIES, OVERFLOWED, Overflow, check_overflow, offer

__all__ = ["observe_on_bounded"]

T = TypeVar("T")

_log = logging.getLogger(__name__)

# Items per scheduled drain before it yields the scheduler to other work.
_BATCH = 1024


class _Handoff(abc.ObserverBase[T], Generic[T]):
    def __init__(
        self,
        downstream: abc.ObserverBase[T],
        scheduler: abc.SchedulerBase,
        capacity: int,
        overflow: Overflow,
        on_overflow: Callable[[T], object] | None,
        block_timeout: float | None,
    ) -> None:
        self._downstream = downstream
        self._scheduler = scheduler
        self._capacity = capacity
        self._overflow: Overflow = overflow
        self._on_overflow = on_overflow
        self._block_timeout = block_timeout
        self.upstream = SingleAssignmentDisposable()
        self._drain_disposable = SerialDisposable()
        self._lock = threading.Lock()
        self._not_full = threading.Condition(self._lock)
        self._items: deque[T] = deque()
        self._producers_waiting = 0
        self._draining = False  # a drain is scheduled or running
        self._drain_thread: int | None = None
        self._done = False
        self._error: Exception | None = None
        self._stopped = False

    def _why_not_block(self) -> str | None:
        """Says why the calling thread must not wait for room, or None if it may."""
        if threading.get_ident() == self._drain_thread:
            return "the producer runs on the consumer's thread"
        if on_event_loop():
            return "the producer runs on an asyncio event-loop thread"
        scheduler_thread = getattr(self._scheduler, "_thread", None)
        if isinstance(self._scheduler, EventLoopScheduler) and (
            scheduler_thread is threading.current_thread()
        ):
            return "the producer runs on the consumer's EventLoopScheduler thread"
        return None

    def _wait_for_room(self) -> BackpressureError | None:
        """Blocks (holding the condition) until there is room; returns an error if it can't."""
        reason = self._why_not_block()
        if reason is not None:
            return BackpressureError(f"buffer of {self._capacity} full and {reason}")
        deadline = None if self._block_timeout is None else time.monotonic() + self._block_timeout
        self._producers_waiting += 1
        try:
            while len(self._items) >= self._capacity and not (self._stopped or self._done):
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return BackpressureError(
                        f"buffer of {self._capacity} stayed full for {self._block_timeout} s"
                    )
                self._not_full.wait(remaining)
        finally:
            self._producers_waiting -= 1
        return None

    def on_next(self, value: T) -> None:
        dropped: tuple[T] | None = None
        failure: BackpressureError | None = None
        with self._lock:
            if self._stopped or self._done:
                return
            if len(self._items) < self._capacity:
                self._items.append(value)
            elif self._overflow == "block":
                failure = self._wait_for_room()
                if self._stopped or self._done:
                    return
                if failure is None:
                    self._items.append(value)
            else:
                result = offer(self._items, value, self._capacity, self._overflow)
                if result is OVERFLOWED:
                    failure = BackpressureError(f"buffer of {self._capacity} overflowed")
                elif isinstance(result, tuple):
                    dropped = result
            if failure is not None:
                # Like RxJava: the waiting items are discarded, the error is delivered next.
                self._items.clear()
                self._done = True
                self._error = failure
            start = not self._draining
            self._draining = True
        if failure is not None:
            self.upstream.dispose()
        if dropped is not None and self._on_overflow is not None:
            self._on_overflow(dropped[0])
        if start:
            self._schedule()

    def on_error(self, error: Exception) -> None:
        self._finish(error)

    def on_completed(self) -> None:
        self._finish(None)

    def _finish(self, error: Exception | None) -> None:
        with self._lock:
            if self._stopped or self._done:
                return
            self._done = True
            self._error = error
            self._not_full.notify_all()
            start = not self._draining
            self._draining = True
        if start:
            self._schedule()

    def _schedule(self) -> None:
        self._drain_disposable.disposable = self._scheduler.schedule(self._drain)

    def _drain(self, _: abc.SchedulerBase, __: Any = None) -> None:
        me = threading.get_ident()
        self._drain_thread = me
        try:
            for _count in range(_BATCH):
                with self._lock:
                    if self._stopped:
                        self._draining = False
                        return
                    if not self._items:
                        if not self._done:
                            self._draining = False
                            return
                        self._stopped = True
                        error = self._error
                        break
                    item = self._items.popleft()
                    if self._producers_waiting:
                        self._not_full.notify()
                try:
                    self._downstream.on_next(item)
                except Exception as exc:
                    self._consumer_failed(exc)
                    return
            else:
                self._schedule()  # a full batch: let other work on the scheduler run first
                return
        finally:
            if self._drain_thread == me:
                self._drain_thread = None
        self._deliver_terminal(error)

    def _deliver_terminal(self, error: Exception | None) -> None:
        # An exception here has nowhere to go; raising it would kill the scheduler's thread.
        try:
            if error is None:
                self._downstream.on_completed()
            else:
                self._downstream.on_error(error)
        except Exception:
            _log.exception("a subscriber's terminal handler raised in observe_on_bounded")

    def _consumer_failed(self, exc: Exception) -> None:
        with self._lock:
            self._stopped = True
            self._draining = False
            self._items.clear()
            self._not_full.notify_all()
        self.upstream.dispose()
        self._deliver_terminal(exc)

    def dispose(self) -> None:
        with self._lock:
            self._stopped = True
            self._items.clear()
            self._not_full.notify_all()
        self.upstream.dispose()
        self._drain_disposable.dispose()


def observe_on_bounded(
    scheduler: abc.SchedulerBase,
    capacity: int = 128,
    overflow: Overflow = "block",
    *,
    on_overflow: Callable[[T], object] | None = None,
    block_timeout: float | None = None,
) -> Callable[[Observable[T]], Observable[T]]:
    """Moves delivery onto ``scheduler`` through a buffer of at most ``capacity`` items.

    Order is kept and delivery is never concurrent. When ``capacity`` items wait:
    ``"block"`` makes the producer's thread wait for room (lossless; true backpressure);
    ``"error"`` discards the waiting items, signals ``BackpressureError`` and disposes
    upstream; ``"drop_oldest"`` / ``"drop_latest"`` evict the oldest / newest waiting item
    (passed to ``on_overflow``). ``"block"`` fails with ``BackpressureError`` instead of
    deadlocking when the producer must not wait: it runs on the consumer's own thread, or on
    an asyncio event-loop thread, or ``block_timeout`` seconds pass without room.

    A consumer exception disposes upstream and becomes ``on_error``; the scheduler survives.
    Disposing clears the buffer at once and releases a blocked producer.

    Marble diagram (capacity 2; the consumer is busy with ``a`` until the box closes)::

        source (thread P):    -a-b-c-d-e-----|
        consumer (thread S):   [a........]
        "block":              -a---------b-c-d-e-|   (P waits in on_next(d) for room)
        "drop_oldest":        -a---------d-e----|    (b, c evicted)
        "error":              -a---------#           (BackpressureError; upstream disposed)

    Args:
        scheduler: where the consumer runs, e.g. an ``EventLoopScheduler`` or an
            ``AsyncIOThreadSafeScheduler``.
        capacity: how many items may wait (at least 1).
        overflow: ``"block"``, ``"error"``, ``"drop_oldest"`` or ``"drop_latest"``.
        on_overflow: called, on the producer's thread, with each evicted item.
        block_timeout: for ``"block"``, the most seconds a producer waits before failing.

    Returns:
        The operator.

    Raises:
        ValueError: for a capacity below 1 or an unknown strategy.
    """
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    check_overflow(overflow, BOUNDED_STRATEGIES)

    def operator(source: Observable[T]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], downstream_scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            handoff = _Handoff(observer, scheduler, capacity, overflow, on_overflow, block_timeout)
            handoff.upstream.disposable = source.subscribe(handoff, scheduler=downstream_scheduler)
            return Disposable(handoff.dispose)

        return Observable(subscribe)

    return operator
