"""Cold Observables around synchronous calls: the cheapest Single, Maybe and Completable.

They run ``fn`` on the subscribing thread at subscribe time, so they add no thread hop and
no scheduler round trip; use them for work that never blocks (in-memory stores, pure
functions). Blocking work belongs on the I/O scheduler (:func:`adk_rx.rx.from_blocking`).

    just(x):         --x|           (like rx.just, without a scheduler round trip)
    single(fn):      --fn()|        (one item, then completion; an exception becomes on_error)
    maybe(fn):       --x|  or  --|  (None means empty)
    completable(fn): --|
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.rx.awaitable import AwaitableObservable

__all__ = ["completable", "empty", "items", "just", "maybe", "single"]

T = TypeVar("T")

_NOOP = Disposable()


def single(fn: Callable[[], T]) -> Observable[T]:
    """A cold Single: calls ``fn`` at subscribe time and emits its result."""

    def subscribe(observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None) -> Any:
        try:
            value = fn()
        except Exception as exc:
            observer.on_error(exc)
            return _NOOP
        observer.on_next(value)
        observer.on_completed()
        return _NOOP

    return AwaitableObservable(subscribe)


def _complete(observer: abc.ObserverBase[Any], _: abc.SchedulerBase | None = None) -> Any:
    observer.on_completed()
    return _NOOP


_EMPTY: Observable[Any] = AwaitableObservable(_complete)


def empty() -> Observable[Any]:
    """A cold, empty Observable that completes on the subscribing thread, no scheduling."""
    return _EMPTY


def just(value: T) -> Observable[T]:
    """A cold Single of ``value``, emitted on the subscribing thread with no scheduling."""

    def subscribe(observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None) -> Any:
        observer.on_next(value)
        observer.on_completed()
        return _NOOP

    return AwaitableObservable(subscribe)


def items(values: list[T] | tuple[T, ...]) -> Observable[T]:
    """A cold Observable of ``values``, emitted on the subscribing thread, no scheduling.

    Stops early once the subscriber is stopped (disposed from inside ``on_next``).
    """

    def subscribe(observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None) -> Any:
        for value in values:
            if getattr(observer, "is_stopped", False):
                return _NOOP
            observer.on_next(value)
        observer.on_completed()
        return _NOOP

    return AwaitableObservable(subscribe)


def maybe(fn: Callable[[], T | None]) -> Observable[T]:
    """A cold Maybe: calls ``fn`` at subscribe time; ``None`` completes empty."""

    def subscribe(observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None) -> Any:
        try:
            value = fn()
        except Exception as exc:
            observer.on_error(exc)
            return _NOOP
        if value is not None:
            observer.on_next(value)
        observer.on_completed()
        return _NOOP

    return AwaitableObservable(subscribe)


def completable(fn: Callable[[], object]) -> Observable[None]:
    """A cold Completable: calls ``fn`` at subscribe time and completes without items."""

    def subscribe(observer: abc.ObserverBase[None], _: abc.SchedulerBase | None = None) -> Any:
        try:
            fn()
        except Exception as exc:
            observer.on_error(exc)
            return _NOOP
        observer.on_completed()
        return _NOOP

    return AwaitableObservable(subscribe)
