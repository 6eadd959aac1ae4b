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

import threading
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeGuard, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.rx._engine.awaitable import AwaitableObservable, count_as_awaitable
from adk_rx.rx._engine.inner import Inner, InnerTo, Relay
from adk_rx.rx._engine.slots import Slot

__all__ = [
    "SyncObservable",
    "completable",
    "empty",
    "forward",
    "is_sync",
    "items",
    "just",
    "maybe",
    "resume_on_error",
    "single",
    "subscribe_inner",
    "subscribe_stage",
]

T = TypeVar("T")

_NOOP = Disposable()


class SyncObservable(AwaitableObservable[T]):
    """An Observable whose items are known on the calling thread at subscribe time.

    It is the one way a seam (a model, a tool, a store, a request builder, a stage) says "the
    answer is already here": whoever drives the seam checks ``type(x) is SyncObservable``
    (:func:`is_sync`) and takes :meth:`items_now` as plain values instead of subscribing.
    :func:`subscribe_inner`, which every stage operator of the runtime subscribes through,
    does so too, so a synchronous store or helper costs a call, not a subscription.

    Args:
        values: its items, when they are known already.
        make: otherwise, computes them, once per subscription or :meth:`items_now` call
            (:func:`single`, :func:`maybe`, :func:`completable`: cold).
    """

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self,
        values: tuple[T, ...] | None = None,
        make: Callable[[], tuple[T, ...]] | None = None,
    ) -> None:
        self.values = values
        self._make = make

    def items_now(self) -> tuple[T, ...]:
        """Its items as a tuple (or raises the error the stream would end with)."""
        values = self.values
        if values is not None:
            return values
        assert self._make is not None
        return self._make()

    def _subscribe_core(
        self, observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            values = self.items_now()
        except Exception as exc:
            observer.on_error(exc)
            return _NOOP
        for value in values:
            if getattr(observer, "is_stopped", False):
                return _NOOP
            observer.on_next(value)
        observer.on_completed()
        return _NOOP


count_as_awaitable(SyncObservable)


def is_sync(source: object) -> TypeGuard[SyncObservable[Any]]:
    """True when ``source`` is a :class:`SyncObservable` (its items can be taken now)."""
    return type(source) is SyncObservable


def single(fn: Callable[[], T]) -> SyncObservable[T]:
    """A cold Single: calls ``fn`` at subscribe time and emits its result."""
    return SyncObservable(None, lambda: (fn(),))


_EMPTY: SyncObservable[Any] = SyncObservable(())


def empty() -> SyncObservable[Any]:
    """A cold, empty Observable that completes on the subscribing thread, no scheduling."""
    return _EMPTY


def just(value: T) -> SyncObservable[T]:
    """A cold Single of ``value``, emitted on the subscribing thread with no scheduling."""
    return SyncObservable((value,))


def items(values: list[T] | tuple[T, ...]) -> SyncObservable[T]:
    """A cold Observable of ``values``, emitted on the subscribing thread, no scheduling.

    Stops early once the subscriber is stopped (disposed from inside ``on_next``).
    """
    return SyncObservable(values if type(values) is tuple else tuple(values))


def maybe(fn: Callable[[], T | None]) -> SyncObservable[T]:
    """A cold Maybe: calls ``fn`` at subscribe time; ``None`` completes empty."""

    def items_now() -> tuple[T, ...]:
        value = fn()
        return () if value is None else (value,)

    return SyncObservable(None, items_now)


def completable(fn: Callable[[], object]) -> SyncObservable[None]:
    """A cold Completable: calls ``fn`` at subscribe time and completes without items."""

    def items_now() -> tuple[None, ...]:
        fn()
        return ()

    return SyncObservable(None, items_now)


def subscribe_inner(
    source: Observable[T],
    on_next: Any,
    on_error: Any = None,
    on_completed: Any = None,
    scheduler: abc.SchedulerBase | None = None,
    *,
    into: Slot | None = None,
    relay: Any = None,
) -> abc.DisposableBase:
    """Subscribes an inner stage of a running subscription, without another wrapper layer.

    ``Observable.subscribe`` wraps every observer (auto-detach, trampoline check), which
    costs several microseconds per layer; a stage that runs inside a subscription that was
    already set up that way needs none of it. Like ``subscribe``, an exception raised while
    subscribing goes to ``on_error``, and the source is released once it terminated.

    Args:
        on_next: the item callback; or, with neither ``on_error`` nor ``on_completed``
            given, an observer whose own methods are called (no bound methods are made).
        into: receives the handle *before* the source is subscribed, so a disposal that
            comes while the source still produces inside its ``subscribe`` reaches it.
        relay: with an observer ``on_next``, where its items go instead, as they are: an
            ``on_next`` that drops items itself once the observer stopped (:class:`Relay`).
    """
    observer: Inner | InnerTo  # also the handle
    if relay is not None:
        observer = Relay(on_next, relay)
    elif on_error is None and on_completed is None:
        observer = InnerTo(on_next)
    else:
        observer = Inner(on_next, on_error, on_completed)
    if into is not None:
        into.disposable = observer
    if type(source) is SyncObservable:  # its items are known now: handed over, not subscribed
        try:
            values = source.items_now()
        except Exception as exc:
            observer.on_error(exc)
            return observer
        for value in values:
            if observer.stopped:
                return observer
            observer.on_next(value)
        observer.on_completed()
        return observer
    try:
        inner = source._subscribe_core(  # pyright: ignore[reportPrivateUsage]
            observer,  # pyright: ignore[reportArgumentType]
            scheduler,
        )
    except Exception as exc:
        observer.on_error(exc)
        return observer
    if inner is None:  # a subscribe function may return nothing, or a bare callable
        inner = _NOOP
    else:
        try:  # a disposable (an attribute read: isinstance against the ABC costs two calls)
            inner.dispose  # noqa: B018
        except AttributeError:
            inner = Disposable(inner)  # pyright: ignore[reportArgumentType] - a bare callable
    if observer.stopped:
        inner.dispose()  # terminated (or disposed) while subscribing: release the source now
    else:
        observer.subscription = inner
        if observer.stopped:  # terminated on another thread in between
            observer.dispose()
    return observer


class StagePhase(Enum):
    """Where one stage of a chain is, seen from the code that subscribed it."""

    SUBSCRIBING = "subscribing"  # inside the stage's subscribe()
    COMPLETED_EARLY = "completed early"  # completed before its subscribe() returned
    RUNNING = "running"  # subscribe() returned; the stage completes later, on any thread


def subscribe_stage(
    source: Observable[T],
    on_next: Callable[[T], None],
    on_error: Callable[[Exception], None],
    resume: Callable[[], None],
    scheduler: abc.SchedulerBase | None = None,
    *,
    into: Slot,
) -> bool:
    """Subscribes one stage of a chain; True when it already completed (the caller goes on).

    A chain of stages (steps of a loop, items of a ``concat_map``) must not grow the stack
    when each stage completes inside its own ``subscribe``: then this returns True and the
    caller starts the next stage from its own loop. Otherwise it returns False, and
    ``resume()`` is called once the stage completes (on whatever thread completes it).

        source:       --a--b|          (completes while subscribing)  -> True
        source:       --a--  ...  --b|  (completes later)             -> False, then resume()
    """
    lock = threading.Lock()
    phase = [StagePhase.SUBSCRIBING]

    def completed() -> None:
        with lock:
            later = phase[0] is StagePhase.RUNNING
            if not later:
                phase[0] = StagePhase.COMPLETED_EARLY
        if later:
            resume()

    subscribe_inner(source, on_next, on_error, completed, scheduler, into=into)
    with lock:
        if phase[0] is StagePhase.COMPLETED_EARLY:
            return True
        phase[0] = StagePhase.RUNNING
        return False


def forward(
    source: Observable[T], observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
) -> abc.DisposableBase:
    """Subscribes ``observer`` (already guarded by an outer ``subscribe``) to ``source`` directly.

    For defer-like wrappers that build an Observable at subscribe time and hand it the same
    observer.
    """
    return source._subscribe_core(observer, scheduler)  # pyright: ignore[reportPrivateUsage]


def resume_on_error(
    handler: Callable[[Exception], Observable[T]],
) -> Callable[[Observable[T]], Observable[T]]:
    """``catch`` for inner stages: on error, continue with ``handler(error)``'s Observable.

        source:                  --a--#e
        handler(e) = --b|
        resume_on_error(h):      --a----b|

    Same as ``ops.catch(lambda e, _: handler(e))`` with one wrapper layer less per stage.
    """

    def operator(source: Observable[T]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            resume = _Resume(observer, handler, scheduler)
            # The source's items go straight to the subscriber, whose own stop drops late ones.
            subscribe_inner(
                source, resume, None, None, scheduler, into=resume, relay=observer.on_next
            )
            return resume

        return AwaitableObservable(subscribe)

    return operator


class _Resume(Slot):
    """One subscription of :func:`resume_on_error`: the slot of the source, then of the
    fallback. Each is in the slot before it is subscribed, so a source that fails inside its
    own subscribe has its handle replaced by the fallback's, never the other way round."""

    __slots__ = ("_handler", "_observer", "_scheduler")

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self,
        observer: abc.ObserverBase[Any],
        handler: Callable[[Exception], Observable[Any]],
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self._current: abc.DisposableBase | None = None  # Slot's state, set here: one call less
        self.is_disposed = False
        self._observer = observer
        self._handler = handler
        self._scheduler = scheduler

    def on_completed(self) -> None:
        self._observer.on_completed()

    def on_error(self, error: Exception) -> None:
        observer = self._observer
        try:
            resumed = self._handler(error)
        except Exception as exc:
            observer.on_error(exc)
            return
        subscribe_inner(
            resumed,
            observer.on_next,
            observer.on_error,
            observer.on_completed,
            self._scheduler,
            into=self,
        )
