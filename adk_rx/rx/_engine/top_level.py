"""``StartAware``: a cold Observable that knows whether its subscriber can still stop it.

A synchronous source subscribed inside an operator chain (``take(3)``, ``take_until``) must
not run before the chain holds its handle, or a dispose from inside ``on_next`` could not
reach it: stock Rx sources start on the thread's trampoline for that reason. A subscription
made at the top of a thread (``source.subscribe(on_next)``, no trampoline running) has no such
chain: the subscriber gets the handle only once ``subscribe()`` returns, whatever the source
does. Stock ``subscribe()`` opens a trampoline there, and the source queues its start on it
a second time; ``StartAware`` opens it once and tells its start function not to queue again.

    start(observer, queued=False)   subscribe() at the top of a thread (inside the trampoline
                                    it opened)
    start(observer, queued=True)    subscribed from inside an operator chain or a trampoline
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.observer import AutoDetachObserver
from reactivex.scheduler import CurrentThreadScheduler

from adk_rx.rx._engine.awaitable import AwaitableObservable

__all__ = ["StartAware"]

T = TypeVar("T")

Start = Callable[[abc.ObserverBase[T], bool], abc.DisposableBase]


class StartAware(AwaitableObservable[T]):
    """An Observable whose start function learns whether to go through the trampoline.

    Args:
        start: called once per subscription with the observer and ``queued`` (True: start
            on the thread's trampoline); returns the subscription's disposable.
    """

    def __init__(self, start: Start[T]) -> None:
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return start(observer, True)

        super().__init__(subscribe)
        self._start = start

    def subscribe(  # type: ignore[override]
        self,
        on_next: Any = None,
        on_error: Any = None,
        on_completed: Any = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Subscribes as stock ``Observable.subscribe`` does (an observer or callbacks)."""
        if not CurrentThreadScheduler.singleton().get_trampoline().idle():
            return super().subscribe(on_next, on_error, on_completed, scheduler=scheduler)
        if isinstance(on_next, abc.ObserverBase) or callable(getattr(on_next, "on_next", None)):
            observer: Any = on_next
            on_next, on_error, on_completed = (
                observer.on_next,
                observer.on_error,
                observer.on_completed,
            )
        auto_detach: AutoDetachObserver[T] = AutoDetachObserver(on_next, on_error, on_completed)

        def run(*_: Any) -> None:
            try:
                auto_detach.subscription = self._start(auto_detach, False)
            except Exception as exc:
                if not auto_detach.fail(exc):
                    raise

        # The run goes on inside a trampoline, as under stock subscribe(): stock operators
        # within it (a loop's repeat, a concat) rely on one to stop in order.
        CurrentThreadScheduler.singleton().schedule(run)
        return Disposable(auto_detach.dispose)
