"""``collected``: wait for a source's end, its items kept aside instead of emitted.

For a step generator (see :mod:`~adk_rx.rx._engine.generator_stage`) that must handle an
answer arriving later as plain values: it yields ``collected(source, into)``, which emits
nothing, and reads ``into`` once the yield returns (an error is raised at the yield)::

    source:                 --a--b|
    collected(source, xs):  ------|      (xs == [a, b] by then)

    source:                 --a--#e
    collected(source, xs):  -----#e      (xs == [a])

Disposing it disposes the source.
"""

from __future__ import annotations

from typing import Any, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable

__all__ = ["collected"]

T = TypeVar("T")


def collected(source: Observable[T], into: list[T]) -> Observable[Any]:
    """An Observable of no items that ends as ``source`` ends; ``source``'s items are
    appended to ``into`` as they come."""
    return _Collected(source, into)


class _Collected(AwaitableObservable[Any]):
    """One object per wait (no subscribe function around it)."""

    def __init__(self, source: Observable[T], into: list[T]) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._subscribe = None
        self._source = source
        self._into = into

    def _subscribe_core(
        self, observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        source, into = self._source, self._into
        self._source = self._into = None  # subscribed once: a waiting run keeps no more
        return sync.subscribe_inner(
            source,  # pyright: ignore[reportArgumentType]
            into.append,  # pyright: ignore[reportOptionalMemberAccess]
            observer.on_error,
            observer.on_completed,
            scheduler,
        )
