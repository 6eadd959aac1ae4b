"""``from_async``: a coroutine or an async iterator as a cold, cancellable Observable."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from types import CoroutineType
from typing import Any, Generic, TypeAlias, TypeVar, Union, cast

from reactivex import Observable, abc

from adk_rx.rx._engine.awaitable import LaterObservable
from adk_rx.rx._engine.loops import EMITTING
from adk_rx.rx.schedulers import runtime_loop

__all__ = ["AsyncSource", "from_async"]

T = TypeVar("T")

AsyncSource: TypeAlias = Union[Awaitable[T], AsyncIterator[T], AsyncIterable[T]]  # noqa: UP007
"""What a :func:`from_async` factory may return."""

# asyncio keeps only weak references to tasks; a pump must not be collected while it runs.
_pumps: set[asyncio.Task[Any]] = set()
# The context a pump's done-callback runs in: it only drops the task from ``_pumps``, so it
# needs no copy of the subscriber's context (the task itself runs in one).
_BARE_CONTEXT = contextvars.Context()
_FORGET = _pumps.discard  # one bound method for every pump, not one each


def _on_thread_of(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def from_async(factory: Callable[[], AsyncSource[T]]) -> Observable[T]:
    """A cold Observable that runs a coroutine or an async iterator as a task.

    ``factory`` is called once per subscription, inside the task. A coroutine (any awaitable)
    emits its result, ``None`` included, then completes; an async iterator or iterable emits
    its items. The task runs on :func:`runtime_loop` as seen from the subscribing thread: the
    subscriber's own running loop, or adk_rx's background loop.

    Disposing from any thread cancels the task (through ``call_soon_threadsafe`` when called
    off the loop, so the loop wakes at once) and closes the async generator, so its ``finally``
    runs. Disposing from inside ``on_next`` stops the iteration before the next item is pulled.

    The task never blocks its loop: a bounded buffer of adk_rx downstream (``to_iterable``,
    ``to_async_iterable``, a model's answer held while a step takes over) that is full when
    ``on_next`` reaches it pauses the iteration instead, until it has room.

    Subscribed from another thread, the task may start before that thread has finished wiring
    the subscription chain (RxPY has no ``onSubscribe``); a generator that never awaits can
    then run ahead of a downstream ``take`` until the disposal reaches it. Items pulled in that
    window are dropped, never delivered.

    Marble diagram::

        factory() -> coroutine returning r:    ----r|
        factory() -> async gen yielding a, b:  --a--b--|
        dispose() at X:                        --a--X      (task cancelled, generator closed)

    Args:
        factory: a zero-argument callable returning a coroutine or an async iterator.

    Returns:
        An Observable of the result or the items.
    """

    # Exactly a LaterObservable (not a subclass): the driver passes it on as it is. Its
    # subscribe function is a partial (one object), not a closure (a function, its cell and
    # their tuple), kept for as long as the Observable is.
    return LaterObservable(functools.partial(_subscribe, factory))


def _subscribe(
    factory: Callable[[], AsyncSource[T]],
    observer: abc.ObserverBase[T],
    _: abc.SchedulerBase | None = None,
) -> abc.DisposableBase:
    try:
        loop = asyncio.get_running_loop()  # runtime_loop(), read once: this thread's own
    except RuntimeError:
        loop = runtime_loop()  # adk_rx's background loop, on a thread of its own
        pump = _Pump(factory, observer, loop)
        loop.call_soon_threadsafe(pump.start)
        return pump
    pump = _Pump(factory, observer, loop)
    pump.start()
    return pump


class _Pump(abc.DisposableBase, Generic[T]):
    """One subscription of :func:`from_async`: its task, and the disposable that cancels it.

    One object with a handful of slots, not a set of closures: a thousand invocations waiting
    on their models keep a thousand of these alive. No lock either: ``start`` runs on the
    loop's thread and ``dispose`` on any; ``start`` looks at the flag again after it made the
    task, so whichever of the two comes second cancels it.
    """

    __slots__ = ("__weakref__", "_disposed", "_factory", "_loop", "_observer", "_pause", "_task")

    def __init__(
        self,
        factory: Callable[[], AsyncSource[T]],
        observer: abc.ObserverBase[T],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._factory: Callable[[], AsyncSource[T]] | None = factory
        self._observer: abc.ObserverBase[T] | None = observer
        self._loop = loop
        self._task: asyncio.Task[None] | None = None
        self._disposed = False
        self._pause: asyncio.Future[None] | None = None  # set by a full buffer downstream

    def start(self) -> None:
        """Makes the task (on the loop's thread)."""
        if self._disposed:
            return
        task = self._loop.create_task(self._run())
        self._task = task
        _pumps.add(task)
        task.add_done_callback(_FORGET, context=_BARE_CONTEXT)
        if self._disposed:  # disposed on another thread while the task was being made
            self._task = None
            task.cancel()

    async def _run(self) -> None:
        observer, factory = self._observer, self._factory
        # Once running, the pump lets go of its observer and factory: the subscription chain
        # that holds this pump as its disposable would otherwise be a reference cycle, left
        # for the cyclic GC when the run is over.
        self._observer = self._factory = None
        assert observer is not None and factory is not None  # only start() makes the task
        try:
            source: Any = factory()
            del factory  # what it made is running: the factory need not wait with it
            if type(source) is not CoroutineType and (
                hasattr(source, "__anext__") or hasattr(source, "__aiter__")
            ):
                await self._iterate(source, observer)
            else:
                value = await source
                if not self._disposed:
                    observer.on_next(value)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self._disposed:
                observer.on_error(exc)
            return
        if not self._disposed:
            observer.on_completed()

    async def _iterate(self, source: AsyncIterable[T], observer: abc.ObserverBase[T]) -> None:
        iterator = cast(AsyncIterator[T], source) if hasattr(source, "__anext__") else aiter(source)
        # In the task's own context: a full buffer that on_next reaches finds this pump there
        # (no cost per item). Weak references, as a task started meanwhile keeps a copy.
        task = cast("asyncio.Task[Any]", asyncio.current_task())  # this runs as the pump's task
        emitting = EMITTING.set((weakref.ref(self), weakref.ref(task)))
        try:
            while not self._disposed:
                item = await anext(iterator)
                if self._disposed:
                    return
                observer.on_next(item)
                pause = self._pause
                if pause is not None:  # a buffer downstream is full: wait until it has room
                    self._pause = None
                    await pause
        except StopAsyncIteration:
            return
        finally:
            EMITTING.reset(emitting)
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    def pause(self) -> asyncio.Future[None]:
        """(On the loop, inside ``on_next``.) What the pump awaits before its next item."""
        pause = self._pause
        if pause is None:
            pause = self._pause = self._loop.create_future()
        return pause

    def dispose(self) -> None:
        """Cancels the task (from any thread); the pump emits nothing more."""
        if self._disposed:
            return
        self._disposed = True
        self._observer = self._factory = None  # a task not started yet never will be
        # A cancelled task keeps its CancelledError, whose traceback holds the pump's frame and
        # so the pump: the pump lets go of the task, or that would be a reference cycle.
        task, self._task = self._task, None
        if task is None or task.done():
            return  # not started (``start`` will see the flag), or over
        loop = self._loop
        if _on_thread_of(loop):
            # A dispose from inside the pump's own on_next needs no cancel: the pump sees
            # the flag before it pulls again, and cancelling would break its aclose().
            if asyncio.current_task(loop) is not task:
                task.cancel()
        else:
            loop.call_soon_threadsafe(task.cancel)
