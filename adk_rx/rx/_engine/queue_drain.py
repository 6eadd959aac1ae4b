"""The queue-drain ("emitter loop") observer behind serialize and the backpressure operators.

Notifications may arrive from many threads at once; they leave one at a time. The thread that
finds the downstream idle becomes the emitter: it delivers its own item and then everything
that arrived meanwhile. A thread that finds the downstream busy never waits: its item is
buffered under the overflow strategy (or dropped, or signals overflow) and the call returns.
No scheduler is involved, so items reach the downstream on one of the producers' threads.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SingleAssignmentDisposable

from adk_rx.errors import BackpressureError
from adk_rx.rx.overflow import OVERFLOWED, DropStrategy, offer

__all__ = ["QueueDrainObserver", "queue_drain"]

T = TypeVar("T")


class QueueDrainObserver(abc.ObserverBase[T], Generic[T]):
    """Serializes notifications to ``downstream``, buffering under an overflow strategy.

    Args:
        downstream: receives the notifications, never two at a time.
        capacity: how many items may wait while the downstream is busy; ``None`` for no bound.
        overflow: what a full buffer does with an arriving item.
        on_drop: called, on the producer's thread, with every item a drop strategy discards.
    """

    def __init__(
        self,
        downstream: abc.ObserverBase[T],
        capacity: int | None,
        overflow: DropStrategy,
        on_drop: Callable[[T], object] | None = None,
    ) -> None:
        self._downstream = downstream
        self._capacity = capacity
        self._overflow: DropStrategy = overflow
        self._on_drop = on_drop
        self.upstream = SingleAssignmentDisposable()
        self._lock = threading.Lock()
        self._items: deque[T] = deque()
        self._busy = False
        self._done = False
        self._error: Exception | None = None
        self._stopped = False

    def on_next(self, value: T) -> None:
        with self._lock:
            if self._done or self._stopped:
                return
            if self._busy:
                result = offer(self._items, value, self._capacity, self._overflow)
                if result is OVERFLOWED:
                    # RxJava's ERROR strategy: the waiting items are discarded and the error
                    # is the next thing the consumer sees.
                    self._items.clear()
                    self._done = True
                    self._error = BackpressureError(
                        f"more than {self._capacity} items waited for a busy consumer"
                    )
                dropped = result if isinstance(result, tuple) else None
            else:
                self._busy = True
                dropped = None
                result = None
        if result is OVERFLOWED:
            self.upstream.dispose()
        elif dropped is not None:
            if self._on_drop is not None:
                self._on_drop(dropped[0])
        elif result is None:
            self._emit_loop((value,))

    def on_error(self, error: Exception) -> None:
        self._finish(error)

    def on_completed(self) -> None:
        self._finish(None)

    def _finish(self, error: Exception | None) -> None:
        with self._lock:
            if self._done or self._stopped:
                return
            self._done = True
            self._error = error
            if self._busy:
                return  # the emitter delivers it after the waiting items
            self._busy = True
        self._emit_loop(())

    def _emit_loop(self, first: tuple[T] | tuple[()]) -> None:
        pending = first
        while True:
            if pending:
                try:
                    self._downstream.on_next(pending[0])
                except Exception as exc:
                    self._consumer_failed(exc)
                    return
            with self._lock:
                if self._stopped:
                    self._busy = False
                    return
                if self._items:
                    pending = (self._items.popleft(),)
                    continue
                if not self._done:
                    self._busy = False
                    return
                self._stopped = True
                error = self._error
            if error is None:
                self._downstream.on_completed()
            else:
                self._downstream.on_error(error)
            return

    def _consumer_failed(self, exc: Exception) -> None:
        with self._lock:
            self._stopped = True
            self._items.clear()
        self.upstream.dispose()
        self._downstream.on_error(exc)

    def dispose(self) -> None:
        """Stops delivery, drops the waiting items and disposes upstream."""
        with self._lock:
            self._stopped = True
            self._items.clear()
        self.upstream.dispose()


def queue_drain(
    capacity: int | None, overflow: DropStrategy, on_drop: Callable[[T], object] | None = None
) -> Callable[[Observable[T]], Observable[T]]:
    """Builds an operator that puts a :class:`QueueDrainObserver` between source and subscriber.

    Args:
        capacity: how many items may wait while the downstream is busy; ``None`` for no bound.
        overflow: what a full buffer does with an arriving item.
        on_drop: called with every item a drop strategy discards.

    Returns:
        The operator.
    """

    def operator(source: Observable[T]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            drain = QueueDrainObserver(observer, capacity, overflow, on_drop)
            drain.upstream.disposable = source.subscribe(drain, scheduler=scheduler)
            return Disposable(drain.dispose)

        return Observable(subscribe)

    return operator
