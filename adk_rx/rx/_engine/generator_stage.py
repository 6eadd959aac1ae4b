"""``from_generator``: an Observable run by a generator that yields Observables.

The synchronous fast path of the LLM loop. A step written as a generator runs as plain calls
while nothing is asynchronous: a yielded :class:`~adk_rx.rx._engine.sync.SyncObservable`
(``just(event)``, a model or tool that answered at once) has its items emitted at once, with
no subscription per item or per step. Only an asynchronous edge pays for Rx: the generator
yields another Observable (a model that answers on another thread, a tool on the I/O pool),
its items are emitted, and the generator resumes once it completed, on whatever thread
completed it. Either way the value of the ``yield`` is the last item (None if there was
none). An inner error is raised inside the generator at that ``yield``, so it may recover as
from any call.

Marble diagram::

    def steps():
        yield just(a)           # emitted at once
        last = yield inner      # inner's items are emitted; last == c
        yield just(d)

    inner:            --b--c|
    from_generator:   a--b--c-d|

    inner:            --b--#e       (not caught by the generator)
    from_generator:   a--b--#e

Disposal stops the inner at once, emits nothing more, and closes the generator (its
``finally`` blocks run) as soon as it is not running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.collected import Collected
from adk_rx.rx._engine.concat_map_direct import ConcatMapDirect
from adk_rx.rx._engine.inner import INNERS
from adk_rx.rx._engine.settle import Continued
from adk_rx.rx._engine.slots import Slot
from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["Steps", "WaitingSteps", "closed", "from_generator"]

T = TypeVar("T")

Steps = Generator["Observable[T]", "T | None", Any]
"""A generator of Observables whose items are emitted in place."""


def from_generator(make: Callable[[], Steps[T]]) -> Observable[T]:
    """A cold Observable that runs ``make()``'s generator on each subscription.

    Args:
        make: builds the generator; called at subscribe time (an exception errors the stream).

    Returns:
        The Observable of every yielded Observable's items, in order.
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        driver = _Driver(observer, scheduler)
        if type(observer) in INNERS:  # the handle known before the generator runs
            observer.subscription = driver  # pyright: ignore[reportAttributeAccessIssue]
        try:
            generator = make()
        except Exception as exc:
            observer.on_error(exc)
            return driver
        driver.start(generator)
        return driver

    return AwaitableObservable(subscribe)


_SUBSCRIBING = object()
_RUNNING = object()
# Every driver's: each holds it for a read and a write of its own state, never around a call,
# so a thousand runs waiting on their models keep no lock each.
_LOCK = threading.Lock()


class WaitingSteps(Slot, Generic[T]):
    """A step generator's driver, as far as waiting for one inner at a time goes.

    :meth:`_subscribe` subscribes what the generator yielded; when it ends while still
    subscribing, its outcome is handed back for the caller's loop to go on with, else the
    driver itself, as the inner's observer, goes on from its end later, on whatever thread
    ended it, by calling :meth:`_resume` with the last item (or the error). Its items go to
    :meth:`_inner_next`. Subclasses give those two and the generator's loop, and their own
    ``dispose``, which disposes the inner with :meth:`_dispose_inner`: the driver is itself
    the slot of its inner's handle (Slot's ``disposable``), not an object of its own.
    """

    __slots__ = ("_generator", "_last", "_state", "disposed")

    def __init__(self) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._current: abc.DisposableBase | None = None  # Slot's state, set here: one call less
        self.is_disposed = False
        self._generator: Steps[T] | None = None
        self._last: T | None = None
        # Where the inner being subscribed is (one at a time): _SUBSCRIBING, _RUNNING (it
        # goes on later), or its outcome when it ended while subscribing (read and written
        # under _LOCK). All live on the driver, not in closures made per inner, so a run
        # waiting on its model keeps fewer objects.
        self._state: Any = _SUBSCRIBING
        self.disposed = False

    def _resume(self, value: T | None, error: Exception | None) -> None:
        """Runs the generator on from the inner's end (sent ``value``, or thrown ``error``)."""
        raise NotImplementedError

    def _inner_next(self, item: T) -> None:
        """An item of the inner the generator waits for."""
        raise NotImplementedError

    def _subscribe(
        self, inner: Observable[T], scheduler: abc.SchedulerBase | None = None
    ) -> tuple[T | None, Exception | None] | None:
        """Subscribes ``inner``; its outcome when it ended while subscribing, else None."""
        self._last = None
        if self.disposed:  # (on another thread, while the generator ran)
            return None
        self._state = _SUBSCRIBING
        # The driver is the inner's observer itself (on_error, on_completed below); items go
        # straight to _inner_next (the handle drops late ones once it is disposed).
        if type(inner) is Continued:  # an answer already running: the driver takes it over
            inner.take_over(self, self._inner_next, self)
        elif type(inner) is Collected:  # its source's end straight to the driver, its items
            inner.subscribe_into(self, self, scheduler)  # into its list: no layer between
        elif type(inner) is ConcatMapDirect:  # a stage that calls the driver (its on_next)
            inner.drive(self, self)
        else:
            sync.subscribe_inner(
                inner, self, scheduler=scheduler, into=self, relay=self._inner_next
            )
        with _LOCK:
            state = self._state
            if state is _SUBSCRIBING:
                self._state = _RUNNING
                return None
            self._state = _SUBSCRIBING  # the outcome is handed back, not kept
            return state

    def _ended(self, error: Exception | None = None) -> None:
        """The inner's end (its error, or None), called as its ``on_error`` and its
        ``on_completed`` (one frame per end, not two)."""
        with _LOCK:
            later = self._state is _RUNNING
            if not later:
                self._state = (self._last, error)
        if later:
            self._resume(self._last if error is None else None, error)

    # The inner's observer (see _subscribe; its items go to _inner_next).
    def on_next(self, item: T) -> None:
        self._inner_next(item)

    on_error = on_completed = _ended

    def _close(self) -> None:
        if self._generator is not None and closed(self._generator):
            self._generator = None

    _dispose_inner = Slot.dispose  # the inner's handle, and any set later


class _Driver(WaitingSteps[T]):
    """One subscription: steps the generator, subscribes what it yields, and stops it."""

    __slots__ = ("_observer", "_scheduler")

    def __init__(self, observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None) -> None:
        super().__init__()
        self._observer = observer
        self._scheduler = scheduler

    def start(self, generator: Steps[T]) -> None:
        self._generator = generator
        self._advance(None, None)

    def _advance(self, value: T | None, error: Exception | None) -> None:
        """Runs the generator until it waits for an asynchronous inner, ends or fails."""
        generator = self._generator
        if generator is None:
            return  # closed by a disposal
        observer = self._observer
        while not self.disposed:
            try:
                if error is None:
                    item = generator.send(value)
                else:
                    item, error = generator.throw(error), None
            except StopIteration:
                if not self.disposed:
                    observer.on_completed()
                return
            except Exception as exc:
                if not self.disposed:
                    observer.on_error(exc)
                return
            if type(item) is SyncObservable:  # already here: its items emitted as plain calls
                value = None
                try:
                    values = item.items_now()
                except Exception as exc:
                    error = exc
                    continue
                for one in values:
                    if self.disposed:
                        break
                    observer.on_next(one)
                    value = one
                continue
            outcome = self._subscribe(item, self._scheduler)
            if outcome is None:
                return  # completes later: the inner's completion or error goes on from there
            value, error = outcome
        self._close()

    _resume = _advance

    def _inner_next(self, item: T) -> None:
        self._last = item
        self._observer.on_next(item)

    on_next = _inner_next

    def dispose(self) -> None:
        if self.disposed:  # (its observer, handed it early, disposes it as it completes)
            return
        self.disposed = True
        self._dispose_inner()
        self._close()


def closed(generator: Generator[Any, Any, Any]) -> bool:
    """Closes ``generator`` (its finally blocks run); False when it is running on another
    thread, which sees its owner disposed and closes it."""
    try:
        generator.close()
    except ValueError:
        return False
    return True
