"""Bridges out of Rx: a blocking iterator and an async iterator with a bounded buffer.

Both hold at most ``max_buffer`` items and make a producer on another thread wait for room:
real backpressure from the consumer to the source. A :func:`~adk_rx.rx.from_async` producer on
an event loop, which must not wait, is paused at the bound instead. Leaving the loop early
(``break``, an exception, ``close()`` / ``aclose()``, or dropping the iterator) disposes the
subscription and releases a blocked producer. A source error is raised in the consumer after
the items that preceded it. Nothing is subscribed until the first item is requested.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar, cast

from reactivex import Observable, abc, typing
from reactivex.scheduler import NewThreadScheduler

from adk_rx.rx._engine.channel import EMPTY, END, Channel
from adk_rx.rx._engine.loops import on_event_loop
from adk_rx.rx._engine.top_level import subscribe_handing
from adk_rx.rx.schedulers import schedule_now

__all__ = ["to_async_iterable", "to_iterable"]

T = TypeVar("T")


def _producer_thread(target: typing.StartableTarget) -> threading.Thread:
    return threading.Thread(target=target, name="adk_rx-to_iterable", daemon=True)


class _ThreadChannel(Channel[T]):
    """The blocking iterator's channel: its consumer waits on a thread event."""

    __slots__ = ("consumer", "ready", "subscriber")

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.consumer = threading.get_ident()
        self.subscriber: int | None = None  # the thread subscribing the source
        self.ready = threading.Event()

    def can_block(self) -> bool:
        return threading.get_ident() != self.consumer

    def may_wait_released(self) -> bool:
        # The subscribing thread releases the channel; a loop thread must never wait.
        return threading.get_ident() != self.subscriber and not on_event_loop()

    def wake(self) -> None:
        self.ready.set()


class _Link(abc.DisposableBase):
    """The iterator's hold on its subscription: the disposable, as soon as the subscribing
    thread hands it (before a synchronous run starts, see ``subscribe_handing``), and whether
    the iterator let go. Whichever of the two comes second disposes the subscription, and
    then releases the producers that a closed channel holds."""

    __slots__ = ("channel", "closed", "handle", "lock")

    def __init__(self, channel: _ThreadChannel[Any]) -> None:
        self.channel = channel
        self.lock = threading.Lock()
        self.handle: abc.DisposableBase | None = None
        self.closed = False

    def hand(self, handle: abc.DisposableBase) -> None:
        """(The subscribing thread.) The subscription's disposable; may come twice."""
        with self.lock:
            if not self.closed:
                self.handle = handle
                return
        handle.dispose()
        self.channel.release()

    def dispose(self) -> None:
        """(The consumer.) Disposes the subscription, or has the subscribing thread do it."""
        with self.lock:
            self.closed = True
            handle, self.handle = self.handle, None
        if handle is None:  # still inside subscribe(): its thread disposes it when it hands it
            self.channel.close(released=False)
            return
        handle.dispose()
        self.channel.close()


def _subscribe(source: Observable[Any], link: _Link, *_: Any) -> None:
    """Subscribes the channel to ``source`` on this (the producer's) thread."""
    channel = link.channel
    channel.subscriber = threading.get_ident()
    if link.closed:
        channel.release()
        return
    try:
        subscribe_handing(source, channel, link.hand)
    except Exception as exc:  # a subscribe() that raises ends the iteration with its error
        channel.on_error(exc)


class _BlockingIterator(Iterator[T], Generic[T]):
    def __init__(self, source: Observable[T], max_buffer: int) -> None:
        if max_buffer < 1:
            raise ValueError(f"max_buffer must be at least 1, got {max_buffer}")
        self._source: Observable[T] | None = source
        self._max_buffer = max_buffer
        # The channel must not reference this iterator, or a cycle would keep it alive after
        # ``break`` and delay disposal.
        self._channel: _ThreadChannel[T] | None = None
        self._link: _Link | None = None
        self._closed = False

    def _start(self) -> _ThreadChannel[T]:
        channel: _ThreadChannel[T] = _ThreadChannel(self._max_buffer)
        self._channel = channel
        self._link = link = _Link(channel)
        source, self._source = self._source, None  # subscribed once: not kept while it runs
        assert source is not None
        # A synchronous source would emit everything inside subscribe(), on this thread, where
        # it cannot be blocked; subscribing on a thread of its own lets the buffer push back.
        schedule_now(
            NewThreadScheduler(_producer_thread), functools.partial(_subscribe, source, link)
        )
        return channel

    def __next__(self) -> T:
        if self._closed:
            raise StopIteration
        channel = self._channel or self._start()
        channel.consumer = threading.get_ident()
        while True:
            try:
                item = channel.take()
            except BaseException:
                self.close()
                raise
            if item is EMPTY:
                channel.ready.wait()
                channel.ready.clear()
                continue
            if item is END:
                self.close()
                raise StopIteration
            return cast(T, item)

    def close(self) -> None:
        """Disposes the subscription and releases a blocked producer; idempotent."""
        self._closed = True
        if self._link is not None:
            self._link.dispose()

    def __enter__(self) -> _BlockingIterator[T]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def to_iterable(observable: Observable[T], max_buffer: int = 128) -> Iterator[T]:
    """Iterates an Observable in blocking code, with a bounded buffer.

    The source is subscribed on a thread of its own at the first ``next()``, so even a
    synchronous source blocks in ``on_next`` while ``max_buffer`` items wait: a producer never
    runs more than ``max_buffer + 1`` items ahead of the consumer. Items emitted on the
    consumer's own thread cannot wait and are buffered beyond the bound. Leaving the loop
    early disposes the subscription (at once in CPython; call ``close()`` or use the iterator
    as a context manager to be explicit), even while the source is still inside its
    ``subscribe()``: a Runner's run hands its handle over before it starts, and a producer on
    another thread that emits before the source's disposable exists waits until it does and
    was disposed.

    Marble diagram::

        source:        --a--b--c--|        --a--#e
        to_iterable:   yields a, b, c      yields a, then raises e

    Args:
        observable: the source.
        max_buffer: how many items may wait for the consumer.

    Returns:
        A blocking iterator (with ``close()`` and context-manager support).
    """
    return _BlockingIterator(observable, max_buffer)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():  # a consumer cancelled while waiting left it cancelled
        waiter.set_result(None)


class _LoopChannel(Channel[T]):
    """The async iterator's channel: its consumer awaits one future per wait, made when the
    wait begins and resolved by the producer (through the loop when on another thread)."""

    __slots__ = ("loop", "loop_thread", "waiter")

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.waiter: asyncio.Future[None] | None = None

    def can_block(self) -> bool:
        # The loop thread must never wait: it runs the consumer. Items pushed on it (by a
        # synchronous source or a task on this loop) are buffered beyond the capacity.
        return threading.get_ident() != self.loop_thread

    def wait_begins(self) -> None:
        self.waiter = self.loop.create_future()

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is None:
            return
        if threading.get_ident() == self.loop_thread:
            _resolve(waiter)
            return
        # A closed loop has nobody left to wake.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(_resolve, waiter)


class _AsyncIterator(AsyncIterator[T], Generic[T]):
    def __init__(self, source: Observable[T], max_buffer: int) -> None:
        if max_buffer < 1:
            raise ValueError(f"max_buffer must be at least 1, got {max_buffer}")
        self._source: Observable[T] | None = source
        self._max_buffer = max_buffer
        self._channel: _LoopChannel[T] | None = None
        self._subscription: abc.DisposableBase | None = None
        self._closed = False

    def _start(self) -> _LoopChannel[T]:
        channel: _LoopChannel[T] = _LoopChannel(self._max_buffer)
        self._channel = channel
        source, self._source = self._source, None  # subscribed once: not kept while it runs
        assert source is not None
        self._subscription = source.subscribe(channel)
        return channel

    def __aiter__(self) -> _AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        if self._closed:
            raise StopAsyncIteration
        channel = self._channel or self._start()
        while True:
            try:
                item = channel.take()
            except BaseException:
                self.close()
                raise
            if item is EMPTY:
                try:
                    await cast("asyncio.Future[None]", channel.waiter)
                except BaseException:
                    self.close()
                    raise
                continue
            if item is END:
                self.close()
                raise StopAsyncIteration
            return cast(T, item)

    def close(self) -> None:
        """Disposes the subscription and releases a blocked producer; idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._subscription is not None:
            self._subscription.dispose()
        if self._channel is not None:
            self._channel.close()

    async def aclose(self) -> None:
        """Same as :meth:`close`, for ``contextlib.aclosing`` and async-generator habits."""
        self.close()

    async def __aenter__(self) -> _AsyncIterator[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if not self._closed:
            self.close()


def to_async_iterable(observable: Observable[T], max_buffer: int = 128) -> AsyncIterator[T]:
    """Iterates an Observable with ``async for``, with a bounded buffer.

    The source is subscribed on the consumer's loop at the first ``__anext__``. A producer on
    another thread blocks in ``on_next`` while ``max_buffer`` items wait. A producer on the
    loop thread itself cannot block, because blocking it would stop the consumer too: a
    :func:`~adk_rx.rx.from_async` task is paused at the bound instead, and any other producer's
    items are buffered beyond the bound (a synchronous source is therefore read in full at
    subscribe time). Leaving the ``async for`` early disposes the subscription (at once in
    CPython; call ``aclose()`` or use ``async with`` to be explicit).

    Marble diagram::

        source:              --a--b--c--|        --a--#e
        to_async_iterable:   yields a, b, c      yields a, then raises e

    Args:
        observable: the source.
        max_buffer: how many items may wait for the consumer.

    Returns:
        An async iterator (with ``aclose()`` and async-context-manager support).
    """
    return _AsyncIterator(observable, max_buffer)
