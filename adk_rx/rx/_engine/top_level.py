"""``StartAware``: a cold Observable whose subscription at the top of a thread runs it directly.

A synchronous source subscribed inside an operator chain (``take(3)``, ``take_until``) must
not run before the chain holds its handle, or a dispose from inside ``on_next`` could not
reach it: stock Rx sources start on the thread's trampoline for that reason, and so does a
``StartAware`` subscribed there. A subscription made at the top of a thread
(``source.subscribe(on_next)``, no trampoline running) has no such chain: there stock
``subscribe()`` wraps the observer (auto-detach), opens a trampoline and queues the start on
it; ``StartAware`` only marks the thread's trampoline busy (so stock operators inside the run
queue behind it, as they would under stock ``subscribe()``), calls the start function with
the subscriber's own callbacks, runs what they queued, and returns the handle it gives. The
start function promises what the auto-detach observer would add: no item after the end, one
end, and its resources released at the end.

A subscriber on another thread (a bridge to an iterator, whose consumer may leave at any
time) needs the handle before a synchronous run is over: :func:`subscribe_handing` gives the
start function a ``hand`` to pass its handle up as soon as the handle exists, before the run
starts, so a dispose from the consumer's thread reaches the run while ``subscribe()`` still
runs it.

    start(observer, queued=False, hand)   subscribe() at the top of a thread: runs now, as
                                          plain calls (the thread's trampoline held)
    start(observer, queued=True, None)    subscribed from inside an operator chain or a
                                          trampoline
    hand(handle)                          the handle, before the run starts (``hand`` is None
                                          when nobody asked for it)
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType, MethodType
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.internal.basic import default_error, noop
from reactivex.scheduler.currentthreadscheduler import CurrentThreadSchedulerSingleton
from reactivex.scheduler.trampoline import Trampoline

from adk_rx.rx._engine.awaitable import AwaitableObservable

__all__ = ["Hand", "StartAware", "subscribe_handing"]

T = TypeVar("T")

Hand = Callable[[abc.DisposableBase], None]
Start = Callable[[abc.ObserverBase[T], bool, "Hand | None"], abc.DisposableBase]

_NOOP = Disposable()
_THREAD_TRAMPOLINE: Any = CurrentThreadSchedulerSingleton._local  # pyright: ignore[reportPrivateUsage]


class StartAware(AwaitableObservable[T]):
    """An Observable whose start function learns whether to go through the trampoline.

    Args:
        start: called once per subscription with the observer, ``queued`` (True: start on
            the thread's trampoline) and ``hand`` (None, or a function to call with the
            subscription's disposable as soon as it exists); returns that disposable.
    """

    def __init__(self, start: Start[T]) -> None:  # pyright: ignore[reportMissingSuperCall]
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return start(observer, True, None)

        self._subscribe = subscribe  # (AwaitableObservable's state, set here: one call less)
        self._start = start

    def subscribe(  # type: ignore[override]
        self,
        on_next: Any = None,
        on_error: Any = None,
        on_completed: Any = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
        hand: Hand | None = None,
    ) -> abc.DisposableBase:
        """Subscribes as stock ``Observable.subscribe`` does (an observer or callbacks);
        ``hand``, if given, gets the handle before a run at the top of a thread starts."""
        # The thread's own trampoline (a thread-local no other thread reaches): read and set
        # without its lock.
        tramp: Trampoline = _THREAD_TRAMPOLINE.tramp
        if not tramp._idle:  # pyright: ignore[reportPrivateUsage]
            # Inside a running trampoline: subscribed (and queued) as stock sources are.
            return super().subscribe(on_next, on_error, on_completed, scheduler=scheduler)
        tramp._idle = False  # pyright: ignore[reportPrivateUsage]
        observer: abc.ObserverBase[T]
        # An observer (what stock subscribe checks, without its ABC check, a Python call); a
        # plain function or None is a callback without asking.
        kind = type(on_next)
        if (
            on_next is None
            or kind is FunctionType
            or kind is MethodType
            or not callable(getattr(on_next, "on_next", None))
        ):
            observer = _Callbacks(on_next, on_error, on_completed)
        else:
            observer = on_next
        # The thread's trampoline is held, not scheduled on: the run starts now, and a stock
        # operator inside it (a workflow agent's concat) queues its next step behind the
        # running one, as under stock subscribe(), so a stop from on_next reaches it.
        try:
            handle = self._start(observer, False, hand)
            if tramp._queue.items:  # pyright: ignore[reportPrivateUsage]
                tramp._run()  # pyright: ignore[reportPrivateUsage]
        except Exception as exc:
            observer.on_error(exc)
            handle = _NOOP
        finally:
            tramp._idle = True  # pyright: ignore[reportPrivateUsage]
            if tramp._queue.items:  # pyright: ignore[reportPrivateUsage]
                tramp._queue.clear()  # pyright: ignore[reportPrivateUsage]
        return handle


def subscribe_handing(
    source: Observable[T],
    observer: abc.ObserverBase[T],
    hand: Hand,
    scheduler: abc.SchedulerBase | None = None,
) -> None:
    """Subscribes ``observer`` to ``source``, passing the subscription's disposable to ``hand``.

    A :class:`StartAware` source passes it before its run starts (so a dispose from another
    thread reaches a run still going inside this call), and again when subscribe returns;
    any other source when its ``subscribe()`` returns. ``hand`` may get the same handle twice.
    """
    if isinstance(source, StartAware):
        hand(source.subscribe(observer, scheduler=scheduler, hand=hand))
    else:
        hand(source.subscribe(observer, scheduler=scheduler))


class _Callbacks(abc.ObserverBase[T]):
    """A subscriber's callbacks as an observer: each call goes straight to its function."""

    __slots__ = ("on_completed", "on_error", "on_next")

    def __init__(self, on_next: Any, on_error: Any, on_completed: Any) -> None:
        # Plain functions in the slots: an emit calls the subscriber's function, nothing else.
        self.on_next = on_next or noop
        self.on_error = on_error or default_error  # pyright: ignore[reportAttributeAccessIssue]
        self.on_completed = on_completed or noop
