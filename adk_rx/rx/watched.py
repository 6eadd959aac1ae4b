"""``watched``: a stream whose life one watcher sees: its items, then exactly one end.

A span around a model call, a metric around a tool call: something must start when the work is
subscribed, see what passes, and close exactly once, whether the stream completes, fails or
is disposed, even when those race on different threads. Stock ``do_action`` +
``finally_action`` see disposal only after the fact and without telling it from completion;
``watched`` tells the watcher which end it was, before the subscriber hears of it.

Marble diagram (``W`` what the watcher is told)::

    build():    --a--b--|
    watched:    --a--b--|
    W:            a  b  ended(COMPLETED)

    build():    --a--#e
    watched:    --a--#e
    W:            a  ended(FAILED, e)

    build():    --a--b--c--
    disposed:         ^
    watched:    --a--b                   (later items are dropped; the source is disposed)
    W:            a  b ended(DISPOSED)

The watcher's :meth:`Watcher.subscribing` wraps the subscription (to make a span current
while the work starts, say). The watched stream is its source's observer and its
subscriber's handle at once: no wrapper layers, and the source is released as soon as it
terminated.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum
from typing import Any, Generic, TypeVar, cast

from reactivex import Observable, abc
from reactivex.disposable import Disposable

__all__ = ["Outcome", "Watcher", "watched"]

T = TypeVar("T")
R = TypeVar("R")


class Outcome(Enum):
    """How a watched stream ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    DISPOSED = "disposed"


class Watcher(Generic[T]):
    """What :func:`watched` tells about one subscription; override what you need.

    Each method is called on the thread that delivers: ``item`` for every item before the
    subscriber gets it, then ``ended`` exactly once, before the subscriber hears of the end
    (a disposal has no subscriber to tell).
    """

    __slots__ = ()

    def subscribing(self, subscribe: Callable[[], R]) -> R:
        """Runs ``subscribe()`` (the source's subscription); wraps it in a context if needed."""
        return subscribe()

    def item(self, value: T) -> None:
        """An item is about to pass."""

    def ended(self, outcome: Outcome, error: Exception | None) -> None:
        """The stream ended: completed, failed (with ``error``) or disposed."""


def watched(
    build: Callable[[], Observable[T]], new_watcher: Callable[[], Watcher[T]]
) -> Observable[T]:
    """``build()``'s stream, with a watcher told of its items and of its one end.

    Args:
        build: called at subscribe time (inside ``watcher.subscribing``); an exception it
            raises errors the stream.
        new_watcher: called at subscribe time, before ``build``: the subscription's watcher.
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Watch(new_watcher(), observer).start(build, scheduler)

    return Observable(subscribe)


class _Watch(abc.ObserverBase[T], abc.DisposableBase, Generic[T]):
    """The source's observer and the subscriber's handle: open until the first end."""

    __slots__ = ("_lock", "_open", "observer", "subscription", "watcher")

    def __init__(self, watcher: Watcher[T], observer: abc.ObserverBase[T]) -> None:
        self.watcher = watcher
        self.observer = observer
        self.subscription: abc.DisposableBase | None = None
        self._lock = threading.Lock()
        self._open = True

    def start(
        self, build: Callable[[], Observable[T]], scheduler: abc.SchedulerBase | None
    ) -> abc.DisposableBase:
        def run() -> Any:
            try:
                return build()._subscribe_core(self, scheduler)  # pyright: ignore[reportPrivateUsage]
            except Exception as exc:
                self.on_error(exc)
                return None

        inner = self.watcher.subscribing(run)
        if inner is None:  # a subscribe function may return nothing, or a bare callable
            return self
        if not hasattr(inner, "dispose"):
            inner = Disposable(cast("Callable[[], None]", inner))
        if not self._open:
            inner.dispose()  # terminated (or disposed) while subscribing: release it now
        else:
            self.subscription = inner
            if not self._open:  # terminated on another thread in between
                self._release()
        return self

    @property
    def is_stopped(self) -> bool:
        """Producers that poll ``observer.is_stopped`` see the end."""
        return not self._open

    def _close(self) -> bool:
        with self._lock:
            if not self._open:
                return False
            self._open = False
            return True

    def _release(self) -> None:
        subscription, self.subscription = self.subscription, None
        if subscription is not None:
            subscription.dispose()

    def on_next(self, value: T) -> None:
        if self._open:
            self.watcher.item(value)
            self.observer.on_next(value)

    def on_completed(self) -> None:
        if not self._close():
            return
        self.watcher.ended(Outcome.COMPLETED, None)
        try:
            self.observer.on_completed()
        finally:
            self._release()

    def on_error(self, error: Exception) -> None:
        if not self._close():
            return
        self.watcher.ended(Outcome.FAILED, error)
        try:
            self.observer.on_error(error)
        finally:
            self._release()

    def dispose(self) -> None:
        if not self._open or not self._close():
            return  # ended already: the source was released when it terminated
        self._release()
        self.watcher.ended(Outcome.DISPOSED, None)
