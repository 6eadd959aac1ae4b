"""One MCP client session, opened lazily on the runtime loop and reused by every call.

The session lives in one task (``_hold``) on the loop of the first call: the ``mcp`` client's
transports are anyio contexts that must be entered and left by the same task. Calls made
on another loop are handed to that loop (``run_coroutine_threadsafe``; cancelling the caller
cancels the call there). A call that fails (server crashed, timeout, broken pipe) drops
the session, so the next call connects again; so does a server that dies between requests:
its transport's end is noticed (:mod:`.end_watch`), the dead session is closed at once and
the next request opens a new one. A request that is safe to repeat (listing the tools) and
that loses its connection midway is sent once more, on a new session. ``close()`` ends the
session, and with a stdio server the subprocess, which the transport waits for (no zombie
is left).

    call 1:   open --- initialize --- call ---r
    call 2:                               call ---r          (same session)
    server dies:                                  X -> session dropped, transport closed
    call 3:                                             open --- initialize --- call ---r
    close():                                                                          stop
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import threading
from collections.abc import Awaitable, Callable
from pathlib import PurePath
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio

from adk_rx.errors import ConfigurationError, McpConnectionError
from adk_rx.tools.mcp.end_watch import EndWatchedStream
from adk_rx.tools.mcp.params import (
    ConnectionParams,
    SseConnectionParams,
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
        if not isinstance(
            params, StdioConnectionParams | StreamableHTTPConnectionParams | SseConnectionParams
        ):
            raise ConfigurationError(
                "connection_params must be StdioConnectionParams, "
                f"StreamableHTTPConnectionParams or SseConnectionParams, got {params!r}"
            )
        self.params = params
        self._lock = threading.Lock()
        self._live: _Live | None = None
        self.connects = 0  # how many sessions were opened (reconnects show here)

    @property
    def server(self) -> str:
        """The server, as error messages name it: its command line, or its URL.

        Error messages may reach the clients of an api-server: paths are cut to their last
        part, and a URL keeps no credentials or query.
        """
        params = self.params
        if isinstance(params, StdioConnectionParams):
            command = params.server_params
            words = [command.command, *command.args]
            return f"`{shlex.join(PurePath(w).name if '/' in w else w for w in words)}`"
        url = urlsplit(params.url)
        return f"{url.scheme}://{url.hostname}{f':{url.port}' if url.port else ''}{url.path}"

    @property
    def is_open(self) -> bool:
        """True while a session is open or opening; False once it ended (closed, failed to
        open, or its server went away)."""
        with self._lock:
            return self._live is not None

    async def run(self, work: Callable[[Any], Awaitable[T]], *, repeatable: bool = False) -> T:
        """Runs ``work(session)`` on the session's loop; a failure drops the session.

        A request the server refused because it no longer knows the session (an HTTP server
        that restarted) is sent once more, on a new session: it did not run.

        Args:
            work: the request, given the open session.
            repeatable: the request may be sent twice (it changes nothing on the server):
                when the connection is lost during it, it is sent once more, on a new
                session. A tool call is not repeated: it may have run before the loss.
        """
        try:
            return await self._attempt(work)
        except Exception as exc:
            if not (_session_expired(exc) or (repeatable and _connection_lost(exc))):
                raise
        return await self._attempt(work)

    async def _attempt(self, work: Callable[[Any], Awaitable[T]]) -> T:
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
                # The server went away (its stdout ended): close this session now, so the
                # next request opens a new one instead of failing on this one.
                watched = EndWatchedStream(read, lambda: self._drop(live))
                # No session-wide read timeout: it would cut initialize short; each request
                # carries its own (params.timeout).
                session = await stack.enter_async_context(ClientSession(watched, write))
                try:
                    await asyncio.wait_for(session.initialize(), connect_timeout)
                except TimeoutError as exc:
                    raise McpConnectionError(
                        f"the MCP server {self.server} did not initialise within "
                        f"{connect_timeout} s"
                    ) from exc
                live.ready.set_result(session)
                await live.stop.wait()
        except BaseException as exc:
            if not live.ready.done():
                live.ready.set_exception(_connect_error(self.server, exc))
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
        if isinstance(params, SseConnectionParams):
            from mcp.client.sse import sse_client

            return sse_client(
                params.url,
                headers=dict(params.headers or {}),
                timeout=params.timeout,
                sse_read_timeout=params.sse_read_timeout,
            )
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


def _first(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _connection_lost(exc: BaseException) -> bool:
    """True when ``exc`` says the connection ended under a request (not a refusal or a
    timeout): the request may not have reached the server, or its answer was lost."""
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED

    exc = _first(exc)
    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError)


_EXPIRED = ("session not found", "session terminated")
"""How a streamable HTTP server (HTTP 404) and the ``mcp`` client say a session id is unknown;
the status is not kept, and servers differ in the error code, so the message tells."""


def _session_expired(exc: BaseException) -> bool:
    """True when the server refused the request for an unknown session: it did not run."""
    from mcp import MCPError

    exc = _first(exc)
    return isinstance(exc, MCPError) and exc.message.strip().lower() in _EXPIRED


def _connect_error(server: str, exc: BaseException) -> McpConnectionError:
    detail = _first(exc)
    if isinstance(detail, McpConnectionError):
        return detail
    if _connection_lost(detail):
        reason = "the connection closed before the server answered initialize (did it exit?)"
    else:
        reason = f"{type(detail).__name__}: {detail}"
    error = McpConnectionError(f"cannot connect to the MCP server {server}: {reason}")
    error.__cause__ = exc
    return error
