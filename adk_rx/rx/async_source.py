"""``from_async``: a coroutine or an async iterator as a cold, cancellable Observable."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import TypeAlias, TypeVar, Union, cast

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.rx._engine.awaitable import LaterObservable
from adk_rx.rx.schedulers import runtime_loop

__all__ = ["AsyncSource", "from_async"]

T = TypeVar("T")

AsyncSource: TypeAlias = Union[Awaitable[T], AsyncIterator[T], AsyncIterable[T]]  # noqa: UP007
"""What a :func:`from_async` factory may return."""

# asyncio keeps only weak references to tasks; a pump must not be collected while it runs.
_pumps: set[asyncio.Task[None]] = set()


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

    def subscribe(
        observer: abc.ObserverBase[T], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        loop = runtime_loop()
        lock = threading.Lock()
        disposed = False
        task: asyncio.Task[None] | None = None

        async def pump() -> None:
            try:
                source = factory()
                if hasattr(source, "__anext__") or hasattr(source, "__aiter__"):
                    await _iterate(cast(AsyncIterable[T], source))
                else:
                    value = await cast(Awaitable[T], source)
                    if not disposed:
                        observer.on_next(value)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not disposed:
                    observer.on_error(exc)
                return
            if not disposed:
                observer.on_completed()

        async def _iterate(source: AsyncIterable[T]) -> None:
            iterator = (
                cast(AsyncIterator[T], source) if hasattr(source, "__anext__") else aiter(source)
            )
            try:
                while not disposed:
                    item = await anext(iterator)
                    if disposed:
                        return
                    observer.on_next(item)
            except StopAsyncIteration:
                return
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()

        def start() -> None:
            nonlocal task
            with lock:
                if disposed:
                    return
                task = loop.create_task(pump())
            _pumps.add(task)
            task.add_done_callback(_pumps.discard)

        def dispose() -> None:
            nonlocal disposed
            with lock:
                if disposed:
                    return
                disposed = True
                current = task
            if current is None or current.done():
                return
            if _on_thread_of(loop):
                # A dispose from inside the pump's own on_next needs no cancel: the pump sees
                # the flag before it pulls again, and cancelling would break its aclose().
                if asyncio.current_task(loop) is not current:
                    current.cancel()
            else:
                loop.call_soon_threadsafe(current.cancel)

        if _on_thread_of(loop):
            start()
        else:
            loop.call_soon_threadsafe(start)
        return Disposable(dispose)

    return LaterObservable(subscribe)
