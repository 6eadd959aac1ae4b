"""One MCP client session, opened lazily on the runtime loop and reused by every call.

The session lives in one task (``_hold``) on the loop of the first call: the ``mcp`` client's
transports are anyio contexts that must be entered and left by the same task. Calls made
on another loop are handed to that loop (``run_coroutine_threadsafe``; cancelling the caller
cancels the call there). A call that fails (server crashed, timeout, broken pipe) drops
the session, so the next call connects again; ``close()`` ends the session, and with a stdio
server the subprocess, which the transport waits for (no zombie is left).

    call 1:   open --- initialize --- call ---r
    call 2:                               call ---r          (same session)
    close():                                        stop -> transport exit -> process reaped
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from adk_rx.errors import ConfigurationError, McpConnectionError
from adk_rx.tools.mcp.params import (
    ConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)

__all__ = ["McpConnection", "McpConnectionError"]

T = TypeVar("T")

CONNECT_TIMEOUT = 30.0
"""Seconds a server gets to start and answer ``initialize`` (at least; more if params say)."""


class _Live:
    """One open (or opening) session and the task that holds it."""

    __slots__ = ("closed", "loop", "ready", "stop", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ready: asyncio.Future[Any] = loop.create_future()
        self.ready.add_done_callback(_retrieve)
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.closed = False


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # marks a failed open as seen; callers get it through shield


class McpConnection:
    """The session of one toolset.

    Args:
        params: where the server is.
    """

    def __init__(self, params: ConnectionParams) -> None:
        if not isinstance(params, StdioConnectionParams | StreamableHTTPConnectionParams):
            raise ConfigurationError(
                "connection_params must be StdioConnectionParams or "
                f"StreamableHTTPConnectionParams, got {params!r}"
            )
        self.params = params
        self._lock = threading.Lock()
        self._live: _Live | None = None
        self.connects = 0  # how many sessions were opened (reconnects show here)

    async def run(self, work: Callable[[Any], Awaitable[T]]) -> T:
        """Runs ``work(session)`` on the session's loop; a failure drops the session."""
        loop = asyncio.get_running_loop()
        with self._lock:
            live = self._live
            if live is not None and live.loop is not loop and not live.loop.is_running():
                self._live = live = None  # its loop is gone: start over here
            if live is None:
                live = self._open(loop)
        if live.loop is not loop:
            handed = asyncio.run_coroutine_threadsafe(self._run_on(live, work), live.loop)
            return await asyncio.wrap_future(handed)
        return await self._run_on(live, work)

    async def _run_on(self, live: _Live, work: Callable[[Any], Awaitable[T]]) -> T:
        session = await asyncio.shield(live.ready)
        try:
            return await work(session)
        except asyncio.CancelledError:
            raise
        except Exception:
            self._drop(live)
            raise

    def _open(self, loop: asyncio.AbstractEventLoop) -> _Live:
        live = _Live(loop)
        self._live = live
        self.connects += 1
        live.task = loop.create_task(self._hold(live))
        return live

    def _drop(self, live: _Live) -> None:
        with self._lock:
            if self._live is live:
                self._live = None
        live.loop.call_soon_threadsafe(live.stop.set)

    async def _hold(self, live: _Live) -> None:
        from mcp import ClientSession

        # A server process may take a while to start (interpreter, imports): connecting gets at
        # least CONNECT_TIMEOUT, requests get params.timeout.
        timeout = self.params.timeout
        connect_timeout = max(timeout, CONNECT_TIMEOUT)
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                # No session-wide read timeout: it would cut initialize short; each request
                # carries its own (params.timeout).
                session = await stack.enter_async_context(ClientSession(read, write))
                try:
                    await asyncio.wait_for(session.initialize(), connect_timeout)
                except TimeoutError as exc:
                    raise McpConnectionError(
                        f"the MCP server did not initialise within {connect_timeout} s"
                    ) from exc
                live.ready.set_result(session)
                await live.stop.wait()
        except BaseException as exc:
            if not live.ready.done():
                live.ready.set_exception(_connect_error(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            live.closed = True
            with self._lock:
                if self._live is live:
                    self._live = None

    def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        params = self.params
        if isinstance(params, StdioConnectionParams):
            from mcp import stdio_client

            return stdio_client(params.server_params)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=dict(params.headers or {}))
        stack.push_async_callback(client.aclose)
        return streamable_http_client(params.url, http_client=client)

    def close(self, timeout: float = 10.0) -> Awaitable[None] | None:
        """Ends the session (and a stdio server's process).

        Waits for it from another thread; on the session's own loop returns an awaitable.
        """
        with self._lock:
            live, self._live = self._live, None
        if live is None or live.closed or live.task is None:
            return None
        task = live.task
        try:
            on_loop = asyncio.get_running_loop() is live.loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            live.stop.set()
            return task
        if not live.loop.is_running():
            return None
        live.loop.call_soon_threadsafe(live.stop.set)

        async def finished() -> None:
            await asyncio.wait({task}, timeout=timeout)

        asyncio.run_coroutine_threadsafe(finished(), live.loop).result(timeout + 1)
        return None


def _connect_error(exc: BaseException) -> McpConnectionError:
    detail = exc
    while isinstance(detail, BaseExceptionGroup) and detail.exceptions:
        detail = detail.exceptions[0]
    if isinstance(detail, McpConnectionError):
        return detail
    error = McpConnectionError(
        f"cannot connect to the MCP server: {type(detail).__name__}: {detail}"
    )
    error.__cause__ = exc
    return error
