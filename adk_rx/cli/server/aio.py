"""Awaiting a cold Observable from the server's event loop, whatever thread it ends on."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TypeVar

from reactivex import Observable

__all__ = ["gather"]

T = TypeVar("T")


async def gather(source: Observable[T]) -> list[T]:
    """Subscribes to ``source`` and returns its items; its error is raised here.

    The items may arrive on any thread (a store runs on the I/O pool): the result is handed
    to the loop with ``call_soon_threadsafe``. Cancelling the awaiting task disposes the
    subscription.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[list[T]] = loop.create_future()
    items: list[T] = []

    def settle(error: Exception | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(items)
        else:
            future.set_exception(error)

    def on_error(error: Exception) -> None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, error)

    def on_completed() -> None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, None)

    subscription = source.subscribe(items.append, on_error, on_completed)
    try:
        return await future
    finally:
        subscription.dispose()
