"""Bridges into Rx: blocking calls, blocking iterators and asyncio, each cold and cancellable.

Every bridge follows the cooperative-producer rule: ``subscribe`` returns at once, the work
runs on a worker thread or an asyncio task, and the returned disposable stops it. A thread
cannot be interrupted, so a blocking call always runs to its end; its result is dropped.

The bridges out of Rx (:func:`to_iterable`, :func:`to_async_iterable`) live in
``adk_rx.rx.iterators`` and are re-exported here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.rx._engine.awaitable import LaterObservable
from adk_rx.rx._engine.blocking import Blocking
from adk_rx.rx.async_source import from_async
from adk_rx.rx.iterators import to_async_iterable, to_iterable
from adk_rx.rx.schedulers import io_scheduler, schedule_now

__all__ = [
    "from_async",
    "from_blocking",
    "from_blocking_iterable",
    "to_async_iterable",
    "to_iterable",
]

T = TypeVar("T")


def from_blocking(fn: Callable[[], T], scheduler: abc.SchedulerBase | None = None) -> Observable[T]:
    """A cold Single that runs a blocking call on the I/O scheduler.

    Each subscription schedules ``fn()`` once. Disposing before it returns cancels it if it has
    not started; if it is running, the call finishes on its thread and its result (or error) is
    dropped.

    Marble diagram::

        from_blocking(fn):   ----(fn() on a worker)--r|
        fn raises e:         ----#e

    Args:
        fn: the blocking call.
        scheduler: where it runs; the shared :func:`io_scheduler` by default.

    Returns:
        An Observable that emits ``fn()``'s result and completes.
    """
    return Blocking(fn, scheduler)


def from_blocking_iterable(
    factory: Callable[[], Iterable[T]], scheduler: abc.SchedulerBase | None = None
) -> Observable[T]:
    """A cold Observable that iterates a blocking iterable on a worker thread.

    ``factory()`` is called once per subscription, on the worker. After ``dispose()`` the
    iteration stops before it pulls the next item, and the iterator is closed (``close()``, if
    it has one) so a generator's ``finally`` runs. An item being pulled when ``dispose()``
    arrives is pulled to its end and dropped.

    Marble diagram::

        factory() yields a, b, c:   --a--b--c--|
        dispose() at X:             --a--X           (iterator closed, no further next())

    Args:
        factory: builds the iterable, e.g. a generator function.
        scheduler: where the iteration runs; the shared :func:`io_scheduler` by default.

    Returns:
        An Observable of the iterable's items.
    """

    def subscribe(
        observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        cancelled = threading.Event()

        def work(_: abc.SchedulerBase, __: Any = None) -> None:
            if cancelled.is_set():
                return
            try:
                iterator = iter(factory())
                try:
                    while not cancelled.is_set():
                        try:
                            item = next(iterator)
                        except StopIteration:
                            break
                        if cancelled.is_set():
                            return
                        observer.on_next(item)
                finally:
                    close = getattr(iterator, "close", None)
                    if callable(close):
                        close()
            except Exception as exc:
                if not cancelled.is_set():
                    observer.on_error(exc)
                return
            if not cancelled.is_set():
                observer.on_completed()

        scheduled = schedule_now(scheduler or io_scheduler(), work)

        def dispose() -> None:
            cancelled.set()
            scheduled.dispose()

        return Disposable(dispose)

    return LaterObservable(subscribe)
