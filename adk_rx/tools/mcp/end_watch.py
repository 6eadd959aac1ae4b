"""The read stream of an MCP transport, watched for its end: how a dead server is noticed.

When a stdio server dies, its stdout ends and the transport closes the stream the client
session reads. The ``mcp`` session notices only for itself (its requests fail with
"Connection closed" from then on) and says nothing to its owner. Handing the session this
wrapper instead lets the owner drop the dead session at once, so the next request, a
``tools/list`` as much as a tool call, opens a new one instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

import anyio

__all__ = ["EndWatchedStream"]


class EndWatchedStream:
    """Reads through ``inner`` (an ``mcp`` ReadStream); calls ``on_end`` once when it ends.

    Args:
        inner: the transport's read stream.
        on_end: called on the reading task when the stream ends or is closed under the
            reader (the transport went away); not called when the reader closes it.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end: Callable[[], None] | None = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, when the inner stream carries one."""
        return getattr(self._inner, "last_context", None)

    def _ended(self) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end()

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended()
            raise

    def __aiter__(self) -> EndWatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._on_end = None  # closed by its reader: an end, but not news
        await self._inner.aclose()

    async def __aenter__(self) -> EndWatchedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()
