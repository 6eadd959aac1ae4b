"""``collected``: wait for a source's end, its items kept aside instead of emitted.

For a step generator (see :mod:`~adk_rx.rx._engine.generator_stage`) that must handle an
answer arriving later as plain values: it yields ``collected(source, into)``, which emits
nothing, and reads ``into`` once the yield returns (an error is raised at the yield)::

    source:                 --a--b|
    collected(source, xs):  ------|      (xs == [a, b] by then)

    source:                 --a--#e
    collected(source, xs):  -----#e      (xs == [a])

Disposing it disposes the source. A settled source that goes on later
(:class:`~adk_rx.rx._engine.settle.Continued`) collects into the list itself, with no
layer around it.

``each_of(source, fn)`` is the cheapest ``concat_map`` for a function that answers at once:
each item's ``fn(item)`` (a list) emitted in its place, in one layer::

    source:                 --a------b|
    each_of(source, fn):    --a1-a2--b1|     (fn(a) == [a1, a2], fn(b) == [b1])

An exception from ``fn`` ends it with that error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.settle import Continued
from adk_rx.rx._engine.slots import Slot

__all__ = ["Collected", "collected", "each_of"]

T = TypeVar("T")


def collected(source: Observable[T], into: list[T]) -> Observable[Any]:
    """An Observable of no items that ends as ``source`` ends; ``source``'s items are
    appended to ``into`` as they come."""
    if type(source) is Continued:  # subscribed once, as this is: it collects itself
        source.collect_into = into
        return source
    return Collected(source, into)


class Collected(AwaitableObservable[Any]):
    """One object per wait (no subscribe function around it); what :func:`collected` gives
    for a source that is not a settled answer."""

    def __init__(self, source: Observable[T], into: list[T]) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._subscribe = None
        self._source = source
        self._into = into

    def _subscribe_core(
        self, observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return self.subscribe_into(observer, None, scheduler)

    def subscribe_into(
        self,
        observer: Any,  # an observer (a step's driver is one without being an ObserverBase)
        slot: Slot | None,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Subscribes ``observer`` as the inner that ``subscribe_inner`` would make for this
        one (its handle into ``slot``), with no layer of this one in between."""
        source, into = self._source, self._into
        self._source = self._into = None  # subscribed once: a waiting run keeps no more
        # The observer's own on_error and on_completed are called (no bound methods kept
        # while the source runs); the items go to the list as they are.
        return sync.subscribe_inner(
            source,  # pyright: ignore[reportArgumentType]
            observer,
            scheduler=scheduler,
            into=slot,
            relay=into.append,  # pyright: ignore[reportOptionalMemberAccess]
        )


def each_of(source: Observable[T], fn: Callable[[T], list[Any]]) -> Observable[Any]:
    """The items of ``fn(item)`` for each item of ``source``, in order."""
    return _EachOf(source, fn)


class _EachOf(AwaitableObservable[Any]):
    def __init__(self, source: Observable[T], fn: Callable[[T], list[Any]]) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._subscribe = None
        self._source = source
        self._fn = fn

    def _subscribe_core(
        self, observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        fn = self._fn
        handle: list[abc.DisposableBase] = []

        def each(item: Any) -> None:
            try:
                made = fn(item)
            except Exception as exc:
                if handle:  # (while subscribing, the end that follows is ignored downstream)
                    handle[0].dispose()
                observer.on_error(exc)
                return
            for one in made:
                observer.on_next(one)

        subscription = sync.subscribe_inner(
            self._source, each, observer.on_error, observer.on_completed, scheduler
        )
        handle.append(subscription)
        return subscription
