"""``repeat_steps``: run a fresh step after each one completes, until a rule says it is over.

A loop of stages where each stage is built only once the previous one completed (so it sees
what the previous one did), and whether to go on depends on the last item of the step.
Stock ``concat_with_iterable`` + ``do_action`` would do the same with three layers per item;
this is one. A step that completes inside its own ``subscribe()`` lets the loop go on in
place, so a long synchronous run does not grow the stack.

Marble diagram::

    step() #1:      --a--b|
    step() #2:              --c|        (is_over(c, 2) is True)
    repeat_steps:   --a--b----c|

    step() #1:      --a--#e
    repeat_steps:   --a--#e            (an error ends the loop)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import SerialDisposable

from adk_rx.rx import sync

__all__ = ["repeat_steps"]

T = TypeVar("T")


def repeat_steps(
    step: Callable[[], Observable[T]], is_over: Callable[[T | None, int], bool]
) -> Observable[T]:
    """Subscribes ``step()`` again after each completion until ``is_over`` says stop.

    Args:
        step: builds the next step; called when the previous one completed (an exception
            errors the stream).
        is_over: called after each step with its last item (None if it emitted nothing) and
            the number of steps run so far; True completes the stream.

    Returns:
        A cold Observable of every step's items, in order.
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Loop(step, is_over, observer, scheduler).start()

    return Observable(subscribe)


class _Loop(Generic[T]):
    """One subscription: the current step, the steps taken, the last item of this step."""

    __slots__ = ("current", "is_over", "last", "observer", "scheduler", "step", "taken")

    def __init__(
        self,
        step: Callable[[], Observable[T]],
        is_over: Callable[[T | None, int], bool],
        observer: abc.ObserverBase[T],
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self.step = step
        self.is_over = is_over
        self.observer = observer
        self.scheduler = scheduler
        self.current = SerialDisposable()
        self.taken = 0
        self.last: T | None = None

    def start(self) -> abc.DisposableBase:
        self._run()
        return self.current

    def on_next(self, item: T) -> None:
        self.last = item
        self.observer.on_next(item)

    def _run(self) -> None:
        while not self.current.is_disposed:
            self.last = None
            try:
                source = self.step()
            except Exception as exc:
                self.observer.on_error(exc)
                return
            # Inside this loop's own (guarded) subscription: no extra wrapper per step.
            done = sync.subscribe_stage(
                source,
                self.on_next,
                self.observer.on_error,
                self._resume,
                self.scheduler,
                into=self.current,
            )
            if not done or self._finished():
                return  # asynchronous: the step's completion calls _resume

    def _resume(self) -> None:
        if not self._finished():
            self._run()

    def _finished(self) -> bool:
        self.taken += 1
        try:
            over = self.is_over(self.last, self.taken)
        except Exception as exc:
            self.observer.on_error(exc)
            return True
        if over:
            if not self.current.is_disposed:
                self.observer.on_completed()
            return True
        return False
