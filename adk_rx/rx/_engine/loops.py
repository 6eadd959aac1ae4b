"""Event-loop threads, where nothing may block, and the pumps running on them, which may pause.

A buffer between a producer and a slower consumer makes a producer on another thread wait in
``on_next``; a producer on an event loop must not (it would stall the loop). When that
producer is a :func:`~adk_rx.rx.from_async` pump, the buffer pauses it instead: the pump
awaits the future :func:`pausing_pump` gives before it pulls its next item, and the buffer
resolves it (:func:`resume`, from any thread) once it has room::

    pump on the loop:   --a--b--c------------d--   (c fills the buffer: paused after it)
    buffer:             holds a, b, c; the consumer takes a: resume  ->  the pump pulls d
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from typing import Any, Protocol

__all__ = ["EMITTING", "Pausable", "on_event_loop", "pausing_pump", "resume"]


class Pausable(Protocol):
    """A producer on an event loop that can wait before its next item."""

    def pause(self) -> asyncio.Future[None]:
        """The future the producer awaits before its next item (made on the loop's thread)."""
        ...


EMITTING: contextvars.ContextVar[
    tuple[weakref.ReferenceType[Pausable], weakref.ReferenceType[asyncio.Task[Any]]] | None
] = contextvars.ContextVar("adk_rx_emitting_pump", default=None)
"""The pump iterating and its task, by weak reference (set in the task's own context while it
iterates). A task started while the pump pulls or emits an item (an HTTP client's connection
task, say) copies that context and may outlive the run: weak references let the pump, its
observer and the run go with it; the task tells such a copy from the pump's own context."""


def on_event_loop() -> bool:
    """True when called on a thread that is running an asyncio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def pausing_pump() -> Pausable | None:
    """The pump whose task runs the calling code (it is inside the pump's ``on_next``), if any."""
    found = EMITTING.get()
    if found is None or found[1]() is not asyncio.current_task():
        return None
    return found[0]()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():  # a cancelled pump left it cancelled
        future.set_result(None)


def resume(futures: list[asyncio.Future[None]]) -> None:
    """Resolves the pause futures (from any thread); empties the list."""
    for future in futures:
        loop = future.get_loop()
        if asyncio._get_running_loop() is loop:  # pyright: ignore[reportPrivateUsage]
            _resolve(future)
        else:
            with contextlib.suppress(RuntimeError):  # a closed loop has nobody to resume
                loop.call_soon_threadsafe(_resolve, future)
    futures.clear()
