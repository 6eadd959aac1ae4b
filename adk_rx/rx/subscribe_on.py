"""``subscribe_on_eager``: subscribe on a scheduler, dispose at once on the caller's thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from adk_rx.rx.schedulers import schedule_now

__all__ = ["subscribe_on_eager"]

T = TypeVar("T")


def subscribe_on_eager(scheduler: abc.SchedulerBase) -> Callable[[Observable[T]], Observable[T]]:
    """Subscribes to the source on ``scheduler``; disposes synchronously on the caller's thread.

    Stock ``subscribe_on`` schedules the disposal onto the same worker that runs the
    subscription, so a producer that keeps that worker busy is never told to stop. Here
    ``dispose()`` reaches the source's disposable directly, on the thread that calls it. If the
    subscription has not run yet it is cancelled; if it is still inside the source's
    ``subscribe`` the disposable is disposed as soon as it exists.

    Marble diagram::

        source:                  ---a---b---c---|
        subscribe_on_eager(s):   ---a---b---c---|   (subscribed on s; items keep their thread)
        dispose() at X:          ---a---X           (upstream disposed on the disposing thread)

    Args:
        scheduler: where the subscription (and so a synchronous source's work) runs.

    Returns:
        An operator that moves the subscription onto ``scheduler``.
    """

    def operator(source: Observable[T]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], downstream_scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            upstream = SingleAssignmentDisposable()

            def action(_: abc.SchedulerBase, __: Any = None) -> None:
                if upstream.is_disposed:
                    return
                # Assigning to a disposed SingleAssignmentDisposable disposes the new value, so
                # a dispose() that raced with this subscribe still stops the source.
                upstream.disposable = source.subscribe(observer, scheduler=downstream_scheduler)

            scheduled = schedule_now(scheduler, action)
            return CompositeDisposable(scheduled, upstream)

        return Observable(subscribe)

    return operator
