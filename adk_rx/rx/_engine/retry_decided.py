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

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import SerialDisposable, SingleAssignmentDisposable

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

    return Observable(subscribe)


class _Attempts(Generic[T]):
    """One subscription: the current attempt (or the timer before it), and whether an item
    was emitted."""

    __slots__ = ("_attempt", "_decide", "_emitted", "_lock", "_observer", "_scheduler", "_serial")

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
        self._serial = SerialDisposable()
        self._lock = threading.Lock()
        self._emitted = False

    def start(self) -> abc.DisposableBase:
        self._subscribe_attempt()
        return self._serial

    def _subscribe_attempt(self, *_: Any) -> None:
        with self._lock:
            if self._serial.is_disposed:
                return
        # The slot is installed before subscribing: a source that fails synchronously
        # schedules the next attempt into the serial disposable from inside subscribe(), and
        # that timer must not be replaced (and so cancelled) by this subscription afterwards.
        slot = SingleAssignmentDisposable()
        self._serial.disposable = slot
        try:
            source = self._attempt()
        except Exception as exc:  # an attempt that raises failed at once
            self._on_error(exc)
            return
        slot.disposable = source.subscribe(
            self._on_next, self._on_error, self._observer.on_completed
        )

    def _on_next(self, item: T) -> None:
        self._emitted = True
        self._observer.on_next(item)

    def _on_error(self, error: Exception) -> None:
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
