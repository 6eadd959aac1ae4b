"""The observers :func:`~adk_rx.rx._engine.sync.subscribe_inner` subscribes an inner stage with.

Each is a plain observer with a stop flag that, like RxPY's auto-detach observer, disposes
its source once the source terminated (operators such as ``take_while`` rely on that), and is
also the subscription's handle: disposing it stops delivery at once (late items are dropped)
and disposes the source. :class:`Inner` calls three callbacks (its ``on_next`` is the item
callback itself until it stops: no frame of its own per item); :class:`InnerTo` calls a
target's own ``on_next`` / ``on_error`` / ``on_completed``, so a stage that is an observer
itself is subscribed without three bound methods kept alive for as long as it waits;
:class:`Relay` is an InnerTo whose items go straight to an ``on_next`` that drops them itself
once its stage stopped (no frame of its own per item: a streamed chunk crosses several).

Once stopped, each lets go of what it calls: the run that subscribed it usually holds its
handle, and the callbacks usually reach back to that run, a reference cycle that would
otherwise leave every finished run to the cyclic GC.
"""

from __future__ import annotations

from typing import Any

from reactivex import abc

__all__ = ["INNERS", "Inner", "InnerTo", "Relay"]


def _ignore(*_: Any) -> None:
    pass


class _Ignoring:
    """A target that takes everything and does nothing (what a stopped InnerTo calls)."""

    __slots__ = ()

    on_next = on_error = on_completed = staticmethod(_ignore)


_IGNORING = _Ignoring()


class Inner(abc.ObserverBase[Any], abc.DisposableBase):
    """An inner stage's observer and handle, calling three callbacks.

    Its ``on_next`` is the item callback itself (no frame of its own per item: a streamed
    chunk crosses it); once stopped or disposed, it is one that drops the item."""

    __slots__ = ("_on_completed", "_on_error", "on_next", "stopped", "subscription")

    def __init__(self, on_next: Any, on_error: Any, on_completed: Any) -> None:
        self.on_next = on_next  # pyright: ignore[reportIncompatibleMethodOverride]
        self._on_error = on_error
        self._on_completed = on_completed
        self.stopped = False
        self.subscription: abc.DisposableBase | None = None

    @property
    def is_stopped(self) -> bool:
        """Producers that poll ``observer.is_stopped`` (like RxPY's auto-detach) see a stop."""
        return self.stopped

    def on_error(self, error: Exception) -> None:
        if not self.stopped:
            self.stopped = True
            self.on_next = _ignore  # pyright: ignore[reportAttributeAccessIssue]
            try:
                self._on_error(error)
            finally:
                self.dispose()

    def on_completed(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.on_next = _ignore  # pyright: ignore[reportAttributeAccessIssue]
            try:
                self._on_completed()
            finally:
                self.dispose()

    def dispose(self) -> None:
        self.stopped = True
        self.on_next = self._on_error = self._on_completed = _ignore  # pyright: ignore[reportAttributeAccessIssue]
        subscription, self.subscription = self.subscription, None
        if subscription is not None:
            subscription.dispose()


class InnerTo(abc.ObserverBase[Any], abc.DisposableBase):
    """An inner stage's observer and handle, calling a target observer's methods."""

    __slots__ = ("_target", "stopped", "subscription")

    def __init__(self, target: Any) -> None:
        self._target = target
        self.stopped = False
        self.subscription: abc.DisposableBase | None = None

    @property
    def is_stopped(self) -> bool:
        """Producers that poll ``observer.is_stopped`` (like RxPY's auto-detach) see a stop."""
        return self.stopped

    def on_next(self, value: Any) -> None:
        if not self.stopped:
            self._target.on_next(value)

    def on_error(self, error: Exception) -> None:
        if not self.stopped:
            self.stopped = True
            try:
                self._target.on_error(error)
            finally:
                self.dispose()

    def on_completed(self) -> None:
        if not self.stopped:
            self.stopped = True
            try:
                self._target.on_completed()
            finally:
                self.dispose()

    def dispose(self) -> None:
        self.stopped = True
        self._target = _IGNORING
        subscription, self.subscription = self.subscription, None
        if subscription is not None:
            subscription.dispose()


class Relay(InnerTo):
    """An InnerTo whose ``on_next`` is ``relay`` itself: for a stage that drops late items
    itself (it stops before it disposes this handle), so a stop loses nothing."""

    __slots__ = ("on_next",)

    def __init__(self, target: Any, relay: Any) -> None:  # pyright: ignore[reportMissingSuperCall]
        self.on_next = relay  # pyright: ignore[reportIncompatibleMethodOverride]
        self._target = target
        self.stopped = False
        self.subscription: abc.DisposableBase | None = None

    def on_error(self, error: Exception) -> None:
        self.on_next = _ignore  # pyright: ignore[reportAttributeAccessIssue]
        super().on_error(error)

    def on_completed(self) -> None:
        self.on_next = _ignore  # pyright: ignore[reportAttributeAccessIssue]
        super().on_completed()

    def dispose(self) -> None:  # InnerTo's, inline
        self.stopped = True
        self.on_next = _ignore  # pyright: ignore[reportAttributeAccessIssue]
        self._target = _IGNORING
        subscription, self.subscription = self.subscription, None
        if subscription is not None:
            subscription.dispose()


INNERS = frozenset((Inner, InnerTo, Relay))
"""The inner observers, whose ``subscription`` a source may set before it runs.

A source of the engine that makes its handle before it produces (a stage, a settled answer)
sets it on such an observer first (``if type(observer) in INNERS``): a dispose from another
thread then reaches it while it still runs inside ``subscribe()``, where the observer would
otherwise learn the handle only once ``subscribe()`` returned."""
