"""``retry_decided``: resubscribe a fresh attempt after an error, when and if a rule says so.

Stock ``retry`` resubscribes at once and forever; ``retry_when`` needs a notification stream
per subscription. Here one function looks at each error and answers: give up (pass this
error on, or another one), or try again after a delay on a scheduler (a ``TestScheduler``
gives virtual time). An error after an item was emitted is never retried: a second attempt
would emit the first items twice.

Marble diagram::

    attempt() #1:    --#e1
    decide(e1) = Retry(delay=3)
    attempt() #2:          --a--b|
    retry_decided:   ----------a--b|

    attempt() #1:    --a--#e
    retry_decided:   --a--#e                (an item was emitted: no retry)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.slots import Slot

__all__ = ["Retry", "retry_decided"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """Try again after ``delay`` seconds; ``scheduled`` is called once the retry is set up
    (so whoever drives a virtual clock from it finds the timer)."""

    delay: float
    scheduled: Callable[[], None] | None = None


Decision = Retry | Exception | None
"""None: pass the error on; an exception: give up with it; a Retry: try again."""


def retry_decided(
    attempt: Callable[[], Observable[T]],
    decide: Callable[[Exception], Decision],
    scheduler: abc.SchedulerBase,
) -> Observable[T]:
    """Subscribes ``attempt()``; on an error before any item, asks ``decide`` what next.

    Args:
        attempt: builds one attempt; called at subscribe time and for each retry (raising
            counts as that attempt failing at once).
        decide: maps an error to a :class:`Retry`, an error to end with, or None.
        scheduler: where the waits between attempts run.

    Returns:
        A cold Observable.
    """

    def subscribe(
        observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Attempts(attempt, decide, scheduler, observer).start()

    return AwaitableObservable(subscribe)


class _Attempts(abc.ObserverBase[T], Generic[T]):
    """One subscription: the current attempt (or the timer before it), and whether an item
    was emitted. It is the observer of each attempt itself, and holds the attempt's handle
    in a lock-free slot: a call waiting on its model keeps this object, its slot and the
    attempt's handle, with no lock and no bound methods."""

    __slots__ = ("_attempt", "_decide", "_emitted", "_observer", "_scheduler", "_serial")

    def __init__(
        self,
        attempt: Callable[[], Observable[T]],
        decide: Callable[[Exception], Decision],
        scheduler: abc.SchedulerBase,
        observer: abc.ObserverBase[T],
    ) -> None:
        self._attempt = attempt
        self._decide = decide
        self._scheduler = scheduler
        self._observer = observer
        self._serial = Slot()  # the attempt's handle, or the timer before the next one
        self._emitted = False

    def start(self) -> abc.DisposableBase:
        self._subscribe_attempt()
        return self._serial

    def _subscribe_attempt(self, *_: Any) -> None:
        if self._serial.is_disposed:
            return
        try:
            source = self._attempt()
        except Exception as exc:  # an attempt that raises failed at once
            self.on_error(exc)
            return
        # The attempt's handle is in the slot before it is subscribed: a source that fails
        # synchronously schedules the next attempt into the slot from inside subscribe(),
        # and that timer must not be replaced (and so cancelled) by this subscription after.
        sync.subscribe_inner(source, self, into=self._serial)

    def on_next(self, value: T) -> None:
        self._emitted = True
        self._observer.on_next(value)

    def on_completed(self) -> None:
        self._observer.on_completed()

    def on_error(self, error: Exception) -> None:
        decision = None if self._emitted else self._decide(error)
        if decision is None:
            self._observer.on_error(error)
            return
        if isinstance(decision, Exception):
            self._observer.on_error(decision)
            return
        if decision.delay <= 0.0:
            if decision.scheduled is not None:
                decision.scheduled()
            self._subscribe_attempt()
            return
        self._serial.disposable = self._scheduler.schedule_relative(
            decision.delay, self._subscribe_attempt
        )
        if decision.scheduled is not None:
            decision.scheduled()
