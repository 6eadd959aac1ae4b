"""One remote turn's stream, read by a task of its own, so that giving up never loses the
id of the remote task.

A disposal cancels the turn wherever it waits. Had it waited in the HTTP read itself, the
cancel would cut the stream, and if that came before the first update (which names the
remote task) nothing could cancel the remote task any more. So a reader task pulls the
stream into a queue and notes the task id as soon as an update names it; the turn waits on
the queue, and when it gives up, :meth:`TaskStream.task_id_within` still gets the id::

    HTTP stream:  --T--u--u--u--|         T names the task
    reader:       --T--u--u--u--|         (its own task: a disposal does not cut it)
    turn:         --T--u--X               disposed at X: task id known, tasks/cancel sent
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from a2a.types import StreamResponse

__all__ = ["TaskStream"]


def _task_id(item: StreamResponse) -> str:
    kind = item.WhichOneof("payload")
    if kind == "task":
        return item.task.id
    if kind == "message":
        return item.message.task_id
    if kind == "status_update":
        return item.status_update.task_id
    if kind == "artifact_update":
        return item.artifact_update.task_id
    return ""


class TaskStream:
    """Reads ``stream`` on a task of its own; iterate it for the updates."""

    def __init__(self, stream: AsyncIterator[StreamResponse]) -> None:
        self.task_id = ""
        self._stream = stream
        self._queue: asyncio.Queue[StreamResponse | Exception | None] = asyncio.Queue()
        self._known = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for item in self._stream:
                if not self.task_id:
                    self.task_id = _task_id(item)
                    if self.task_id:
                        self._known.set()
                self._queue.put_nowait(item)
        except Exception as exc:  # raised to the turn, where it is translated
            self._queue.put_nowait(exc)
        finally:
            self._known.set()  # no id is coming any more
            self._queue.put_nowait(None)

    def __aiter__(self) -> TaskStream:
        return self

    async def __anext__(self) -> StreamResponse:
        item = await self._queue.get()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, Exception):
            raise item
        return item

    async def task_id_within(self, timeout: float) -> str:
        """The remote task's id, waiting at most ``timeout`` seconds for the update that
        names it ("" when none came)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._known.wait(), timeout)
        return self.task_id

    async def close(self) -> None:
        """Stops the reader and closes the HTTP stream."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):  # a broken stream has nothing left to close
                await aclose()
