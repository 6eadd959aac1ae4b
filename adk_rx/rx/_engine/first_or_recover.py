"""``first_or_recover``: the first item of a source, mapped, or a fallback on error.

One layer for "take the first result of a call, turn it into an answer, and if the call (or
the mapping) fails, answer from a recovery Observable instead". Stock operators need four:
``take(1)``, ``default_if_empty``, ``map`` and ``catch``. The source is released as soon as
its first item arrives.

Marble diagram::

    source:              --a--b--|
    mapper(a) = A
    first_or_recover:    --A|                (b is never taken; the source is disposed)

    source:              ----|
    first_or_recover:    ----N|              (N = mapper(None))

    source:              --#e
    recover(e):            --r|
    first_or_recover:    ----r|              (a mapper that raises recovers the same way)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.slots import Both, Slot

__all__ = ["first_or_recover"]

T = TypeVar("T")
R = TypeVar("R")


def first_or_recover(
    source: Callable[[], Observable[T]],
    mapper: Callable[[T | None], R],
    recover: Callable[[Exception], Observable[R]],
) -> Observable[R]:
    """Emits ``mapper(first item or None)``, or continues with ``recover(error)``.

    Args:
        source: builds the source at subscribe time (raising counts as the source failing).
        mapper: maps the first item (None when the source completed empty).
        recover: the Observable to continue with when the source or the mapper fails.

    Returns:
        A cold Observable of exactly what the mapper or the recovery emits.
    """

    def subscribe(
        observer: abc.ObserverBase[R], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        upstream = Slot()
        recovery = Slot()
        done = [False]

        def finish(value: T | None) -> None:
            if done[0]:
                return
            done[0] = True
            upstream.dispose()
            try:
                result = mapper(value)
            except Exception as exc:
                fail(exc)
                return
            observer.on_next(result)
            observer.on_completed()

        def fail(exc: Exception) -> None:
            done[0] = True
            try:
                fallback = recover(exc)
            except Exception as error:
                observer.on_error(error)
                return
            sync.subscribe_inner(
                fallback,
                observer.on_next,
                observer.on_error,
                observer.on_completed,
                scheduler,
                into=recovery,
            )

        def failed(exc: Exception) -> None:
            if not done[0]:
                fail(exc)

        def empty() -> None:
            finish(None)

        both = Both(upstream, recovery)
        try:
            built = source()
        except Exception as exc:
            fail(exc)
            return both
        sync.subscribe_inner(built, finish, failed, empty, scheduler, into=upstream)
        return both

    return AwaitableObservable(subscribe)
