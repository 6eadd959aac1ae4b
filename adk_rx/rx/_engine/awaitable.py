"""Observables that can be awaited from asyncio whatever thread they complete on.

``await observable`` in stock RxPY resolves an asyncio future from the thread that completes
the stream; when that is a worker thread (a SQL store, a sync tool), the loop is not woken
and the ``await`` stalls; and stock ``.run()`` raises ``SequenceContainsNoElementsError`` for a
stream that completes empty. adk_rx's public methods return :class:`AwaitableObservable`, whose
``await`` and ``.run()``:

* hands the result to the awaiting loop with ``call_soon_threadsafe`` when it arrives on
  another thread;
* yield the last item, or ``None`` when the stream completes empty (a Maybe that found
  nothing, a Completable);
* dispose the subscription when the awaiting task is cancelled (``await``) or the blocked
  thread is interrupted (``.run()``, e.g. by Ctrl-C).

    await single / single.run():        --x|   ->  x
    await maybe / empty, .run():        --|    ->  None
    await failing / failing.run():      --#e   ->  raises e
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.scheduler import NewThreadScheduler

__all__ = [
    "LATER_KINDS",
    "AwaitableObservable",
    "LaterObservable",
    "awaitable",
    "awaitable_results",
    "count_as_awaitable",
    "gather",
    "returns_awaitable",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# What stock ``Observable.run`` hands its subscription as the default scheduler.
_RUN_SCHEDULER = NewThreadScheduler()


class AwaitableObservable(Observable[T]):
    """An Observable whose ``await`` is safe across threads and yields None when empty.

    It is also the runtime's light Observable: its ``lock`` (which only a few stock
    operators, such as ``take_while``, take) is made on first use, not with every Observable
    a turn builds (some forty per tool turn).
    """

    def __init__(self, subscribe: abc.Subscription[T] | None = None) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._subscribe = subscribe

    if not TYPE_CHECKING:  # type checkers see the stock overloads

        def pipe(self, *operators):
            """Stock ``pipe`` (``f(g(source))`` for ``pipe(g, f)``) as plain calls: the stock
            one imports its helper and composes the operators on every call (some eight calls)."""
            source = self
            for operator in operators:
                source = operator(source)
            return source

    @property
    def lock(self) -> threading.RLock:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The stock Observable's lock, made when an operator first takes it."""
        found = vars(self).get("_lock")
        if found is None:
            found = vars(self).setdefault("_lock", threading.RLock())
        return found

    def __await__(self) -> Generator[Any, None, T]:
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()
        future: asyncio.Future[Any] = loop.create_future()
        last: list[Any] = [None]

        def settle(error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(last[0])

        def deliver(error: BaseException | None) -> None:
            if threading.get_ident() == loop_thread:
                settle(error)
            else:
                loop.call_soon_threadsafe(settle, error)

        def on_next(value: Any) -> None:
            last[0] = value

        subscription = self.subscribe(on_next, deliver, lambda: deliver(None))
        try:
            return (yield from future.__await__())
        finally:
            subscription.dispose()

    def run(self, scheduler: abc.SchedulerBase | None = None) -> T:  # type: ignore[override]
        """Blocks until the stream ends; its last item, or ``None`` when it completed empty.

        Args:
            scheduler: the default scheduler of the subscription (stock ``run``'s default,
                a new-thread scheduler, when omitted).

        Raises:
            Exception: the error the stream ended with.
        """
        done = threading.Event()
        last: list[Any] = [None]
        failure: list[BaseException] = []

        def on_next(value: Any) -> None:
            last[0] = value

        def on_error(error: Exception) -> None:
            failure.append(error)
            done.set()

        subscription = self.subscribe(
            on_next, on_error, done.set, scheduler=scheduler or _RUN_SCHEDULER
        )
        try:
            done.wait()
        finally:
            subscription.dispose()
        if failure:
            raise failure[0]
        return last[0]


class LaterObservable(AwaitableObservable[T]):
    """An Observable that hands its work off (a worker pool, an event loop), so it does not
    answer while subscribed: :func:`~adk_rx.rx._engine.settle.settle` passes it on as it is
    instead of holding what it emits (should a synchronous scheduler run it at once, the
    Rx path that takes it over handles that too)."""


LATER_KINDS: set[type] = {LaterObservable}
"""The LaterObservable types (each added where it is defined): ``settle`` passes them on."""


def awaitable(source: Observable[T]) -> AwaitableObservable[T]:
    """``source`` as an :class:`AwaitableObservable` (the same stream, one more layer)."""
    if isinstance(source, AwaitableObservable):
        return source

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return source.subscribe(observer, scheduler=scheduler)

    return AwaitableObservable(subscribe)


async def gather(source: Observable[T]) -> list[T]:
    """Every item of ``source``, awaited from asyncio whatever thread it ends on.

    Its error is raised here; cancelling the awaiting task disposes the subscription.
    """
    return await awaitable(source.pipe(ops.to_list()))


_AWAITABLE_TYPES: set[type] = {AwaitableObservable}


def count_as_awaitable(kind: type) -> None:
    """Lets service results of the AwaitableObservable subclass ``kind`` pass unwrapped."""
    _AWAITABLE_TYPES.add(kind)


def returns_awaitable(method: F) -> F:
    """Marks a service method that already returns an :class:`AwaitableObservable` (a
    SyncObservable, say): :func:`awaitable_results` leaves it unwrapped, a call less per
    call (the in-memory store's reads and appends, on every turn)."""
    method.__adk_awaitable__ = True  # type: ignore[attr-defined]
    return method


def awaitable_results(cls: type, names: tuple[str, ...]) -> None:
    """Makes the methods ``names`` that ``cls`` defines return :class:`AwaitableObservable`.

    Called from a seam's ``__init_subclass__``, so every implementation of a service (ours or
    a user's) can be awaited from asyncio, whatever thread completes it.
    """
    for name in names:
        method = cls.__dict__.get(name)
        if method is None or getattr(method, "__adk_awaitable__", False):
            continue

        def wrapper(*args: Any, __method: Any = method, **kwargs: Any) -> Any:
            result = __method(*args, **kwargs)
            if type(result) in _AWAITABLE_TYPES:  # the common case, without ABC checks
                return result
            return awaitable(result) if isinstance(result, Observable) else result

        functools.update_wrapper(wrapper, method)
        wrapper.__adk_awaitable__ = True  # type: ignore[attr-defined]
        setattr(cls, name, wrapper)
