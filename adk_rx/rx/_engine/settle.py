"""``settle``: subscribe a seam's answer now, and learn whether it is already here.

A seam (a model, a tool, a store) answers with an Observable. One that emits and completes
while it is being subscribed (``rx.just``, ``rx.of``, ``rx.create`` with immediate
``on_next``) is a value already here: :func:`settle` hands it back as a
:class:`~adk_rx.rx._engine.sync.SyncObservable`, and the driver goes on with plain calls. One
that emits later (another thread, an event loop, a timer) keeps running: :func:`settle` hands
back an Observable that replays what came while subscribing, then forwards the rest.

    source:            --a--b|            (all inside subscribe)
    settle(source):    SyncObservable(a, b)

    source:            --a--  ...  --b--|  (b and the end come later, on any thread)
    settle(source):    --a--  ...  --b--|  (one subscriber; disposing it disposes the source)

A producer on another thread may run ahead of the step that takes its items over: it holds
at most :data:`HELD_AT_MOST` items, then waits in ``on_next`` until the step took over (or
disposed); while held items are replayed it waits too, so it never runs further ahead of the
step's own consumer than that bound. A producer on the subscribing thread, or on an asyncio
event-loop thread, never waits (that could deadlock, or stall the loop): its items are held.
A :func:`~adk_rx.rx.from_async` pump on an event loop is paused instead, under the same
bound, until the step took over (see :mod:`adk_rx.rx._engine.loops`).

The source is subscribed on a trampoline of its own: the runtime's run already holds the
thread's trampoline, and a stock source (``rx.just``, ``rx.of``) would otherwise queue its
items behind the running step instead of emitting them while subscribed. That is what it
would do if subscribed at the top of a thread, which is where a user tested it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.scheduler.currentthreadscheduler import CurrentThreadSchedulerSingleton
from reactivex.scheduler.trampoline import Trampoline

from adk_rx.rx._engine.awaitable import LATER_KINDS, AwaitableObservable
from adk_rx.rx._engine.inner import INNERS
from adk_rx.rx._engine.loops import on_event_loop, pausing_pump, resume
from adk_rx.rx._engine.slots import Slot
from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["HELD_AT_MOST", "Continued", "settle"]

T = TypeVar("T")

HELD_AT_MOST = 8
"""Items a producer on another thread may emit before the step takes over; then it waits."""

_NOOP = Disposable()


def _drop(_: Any) -> None:
    pass


_COMPLETED = object()


class _Spares(threading.local):
    """This thread's idle trampoline, reused (a nested settle makes another one)."""

    def __init__(self) -> None:
        self.one: Trampoline | None = None


_SPARES = _Spares()
_THREAD_TRAMPOLINE: Any = CurrentThreadSchedulerSingleton._local  # pyright: ignore[reportPrivateUsage]


class Continued(AwaitableObservable[T], abc.ObserverBase[Any], abc.DisposableBase):
    """A settled source that goes on later, and the observer it was subscribed with: holds
    what the source emits until a subscriber takes over (subscribing it, once, at once), then
    the source's items go to the subscriber's ``on_next`` itself. One object per wait: no
    subscribe function, Observable or observer around it.

    With ``collect_into`` set (a list, see :func:`~adk_rx.rx._engine.collected.collected`), it
    emits nothing: its items are appended to that list, and it ends as the source ends.
    """

    __slots__ = (
        "collect_into",
        "deliver",
        "downstream",
        "guard",
        "held",
        "is_stopped",
        "on_next",
        "owner",
        "pauses",
        "replaying",
        "room",
        "spare",
        "subscribing",
        "subscription",
        "terminal",
    )

    def __init__(self) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._subscribe = None  # (AwaitableObservable's state: _subscribe_core is its own)
        self.collect_into: list[Any] | None = None
        self.held: list[Any] = []
        self.terminal: Any = None  # _COMPLETED or the error, until delivered
        self.downstream: abc.ObserverBase[Any] | None = None
        self.deliver: Any = _drop  # where items go once taken over (the subscriber's on_next)
        self.guard = threading.Lock()
        # Producers that poll ``observer.is_stopped`` stop once the subscriber is gone (an
        # attribute: a streaming model may read it before every chunk).
        self.is_stopped = False
        self.subscription: abc.DisposableBase = _NOOP
        # The subscribing thread never waits. Threads are told apart by their trampolines (a
        # read, where threading.get_ident() is a call): the thread's own, and the spare one
        # it runs the subscribe on, if any. Set by _subscribe.
        self.owner: object = None
        self.spare: object = None
        self.replaying: object = None  # the trampoline of the thread replaying held items
        # The trampoline the source is being subscribed on, while it is: an item emitted on
        # it is held with no lock, as nobody can take over before the subscribe returned.
        self.subscribing: object = None
        self.room: threading.Condition | None = None  # made when a producer first waits
        self.pauses: list[Any] | None = None  # of pumps on an event loop, until the take-over
        # What the source calls with an item: _hold until a subscriber took over, then the
        # subscriber's own on_next (no frame of this object's per item), and a function that
        # drops the item once stopped.
        self.on_next: Any = self._hold

    def _hold(self, value: Any) -> None:
        downstream = self.downstream
        if downstream is None:
            if _THREAD_TRAMPOLINE.tramp is self.subscribing:  # a source emitting as subscribed
                if self.terminal is None:
                    self.held.append(value)
                return
            with self.guard:
                downstream = self.downstream
                if downstream is None:
                    if self.terminal is not None or self.is_stopped:
                        return
                    held = self.held
                    if (
                        (here := _THREAD_TRAMPOLINE.tramp) is self.owner
                        or here is self.spare
                        or (self.replaying is None and len(held) < HELD_AT_MOST)
                        or here is self.replaying  # a re-entrant emit: replayed next
                    ):
                        held.append(value)
                        return
                    if on_event_loop():  # must not wait: held, and a pump is paused
                        held.append(value)
                        self._pause()
                        return
                    if self._wait_for_taker() is None:
                        return  # disposed meanwhile: the item is dropped
        if not self.is_stopped:
            self.deliver(value)

    def _pause(self) -> None:
        """(Under the guard, on an event loop.) Pauses the pump emitting, if it is one."""
        pump = pausing_pump()
        if pump is not None:
            if self.pauses is None:
                self.pauses = []
            self.pauses.append(pump.pause())

    def _wait_for_taker(self) -> abc.ObserverBase[Any] | None:
        """Waits (holding the guard) until a subscriber took over or the run was disposed."""
        room = self.room
        if room is None:
            room = self.room = threading.Condition(self.guard)
        while self.downstream is None and not self.is_stopped:
            room.wait()
        return None if self.is_stopped else self.downstream

    def on_error(self, error: Exception | Any = _COMPLETED) -> None:
        """The source's end: ``error``, or its completion (called as ``on_completed``).

        Once a subscriber took over, the end is passed on to it, and then this lets go of
        the subscriber and of the source's handle (which usually holds this object: a
        reference cycle), as an auto-detaching observer would."""
        self.on_next = _drop
        downstream = self.downstream
        if downstream is None:
            if _THREAD_TRAMPOLINE.tramp is self.subscribing:  # ended as subscribed: no taker yet
                if self.terminal is None:
                    self.terminal = error
                return
            with self.guard:
                downstream = self.downstream
                if downstream is None:
                    if self.terminal is None:
                        self.terminal = error
                    return
        if self.is_stopped:
            return
        self.is_stopped = True
        self.on_next = self.deliver = _drop  # (again: a take-over in between may have set it)
        try:
            if error is _COMPLETED:
                downstream.on_completed()
            else:
                downstream.on_error(error)
        finally:
            self.downstream = None
            subscription, self.subscription = self.subscription, _NOOP
            if subscription is not _NOOP:  # (let go of already by a dispose meanwhile)
                subscription.dispose()

    on_completed = on_error  # (one frame per end, not two)

    def _subscribe_core(
        self, observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        if type(observer) in INNERS:
            # The stage's handle reaches the source before the held items are replayed: a
            # dispose from another thread (a consumer that left) stops the source at once,
            # not only once this subscribe returned (the replay may wait on that consumer).
            observer.subscription = self  # pyright: ignore[reportAttributeAccessIssue]
        self.take_over(observer, observer.on_next)
        return self

    def take_over(self, observer: Any, relay: Any, into: Slot | None = None) -> None:
        """Replays what was held, in order, then lets the source reach ``observer``.

        Its items go to ``relay`` (or to the list collected into), its end to ``observer``;
        ``into`` (a slot) is given this handle first. For a driver that is the observer
        itself: no observer, and no frame, between the source and it. A producer on
        another thread waits while the held items are replayed, so the items it emits next
        reach ``relay`` directly, after them.
        """
        if into is not None:
            into.disposable = self
        collect_into = self.collect_into
        deliver = relay if collect_into is None else collect_into.append
        me = _THREAD_TRAMPOLINE.tramp
        while True:
            with self.guard:
                held, self.held = self.held, []
                terminal = self.terminal
                if not held and terminal is None:
                    if not self.is_stopped:
                        self.deliver = deliver  # (before a producer can see the subscriber)
                        self.downstream = observer
                        self.on_next = deliver
                    self.replaying = None
                    if self.room is not None:  # producers wait for a taker: released
                        self.room.notify_all()
                    if self.pauses:
                        resume(self.pauses)
                    return
                self.replaying = me
            for value in held:
                if self.is_stopped:
                    return
                deliver(value)
            if terminal is not None:  # it came after every held item: nothing follows it
                if not self.is_stopped:
                    self.downstream = observer
                    self.on_error(terminal)
                return

    def dispose(self) -> None:
        self.on_next = self.deliver = _drop
        self.is_stopped = True
        self.downstream = None  # let go of the subscriber (it may hold this object's handle)
        room = self.room
        if room is not None or self.pauses:  # a producer may wait for a taker: released
            with self.guard:
                if room is not None:
                    room.notify_all()
                if self.pauses:
                    resume(self.pauses)
        # Let go of the source's handle: it usually holds this observer (a reference cycle).
        subscription, self.subscription = self.subscription, _NOOP
        if subscription is not _NOOP:  # (let go of already once the source ended)
            subscription.dispose()


def _subscribe(source: Observable[Any], observer: Continued[Any]) -> abc.DisposableBase:
    """``source`` subscribed on an idle trampoline (the thread's, or a spare one)."""
    current = _THREAD_TRAMPOLINE.tramp
    observer.owner = current
    spare: Trampoline | None = None
    # (The thread's own trampoline, which no other thread reaches: read without its lock.)
    if not current._idle:  # pyright: ignore[reportPrivateUsage]
        spares = _SPARES
        spare = spares.one
        if spare is None:
            spare = Trampoline()
        else:
            spares.one = None
        _THREAD_TRAMPOLINE.tramp = observer.spare = spare
    observer.subscribing = current if spare is None else spare
    try:
        inner = source._subscribe_core(observer)  # pyright: ignore[reportPrivateUsage]
    except Exception as exc:
        observer.on_error(exc)
        inner = _NOOP
    finally:
        observer.subscribing = None
        if spare is not None:
            _THREAD_TRAMPOLINE.tramp = current
            _SPARES.one = spare
    if inner is None:
        return _NOOP
    try:  # a disposable (an attribute read: isinstance against the ABC costs two calls)
        inner.dispose  # noqa: B018
    except AttributeError:  # a bare callable
        return Disposable(cast("Callable[[], None]", inner))
    return inner


def settle(source: Observable[T]) -> Observable[T]:
    """Subscribes ``source`` now; a SyncObservable of its items when it completed meanwhile.

    Otherwise (it goes on later, or it failed) the Observable returned continues the running
    subscription: subscribe it once, at once; disposing it disposes ``source``.
    """
    kind = type(source)
    if kind is SyncObservable or kind in LATER_KINDS:  # known now, or known to wait
        return source
    held: Continued[T] = Continued()
    held.subscription = _subscribe(source, held)
    if held.terminal is _COMPLETED:  # completed (here, or on another thread by now): all held
        return SyncObservable(tuple(held.held))
    return held
