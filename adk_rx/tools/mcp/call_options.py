"""What a toolset adds around each MCP call: confirmation, auth, per-call headers, and the
connection those headers pick.

    call(args) --(confirmed?)--(credential?)--(headers)--(connection for them)--call--r|

Headers belong to an HTTP connection, so each distinct set of headers (one per user's token,
one per tenant a ``header_provider`` names) gets a session of its own, opened on first use and
kept for the next calls with the same headers; at most :data:`MAX_CONNECTIONS` are kept, the
least recently used closed first. A stdio server has no headers: it keeps its one session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from adk_rx.auth.config import AuthConfig
from adk_rx.auth.credential import AuthCredential
from adk_rx.auth.schemes import APIKey, APIKeyIn
from adk_rx.auth.tool_auth import resolve_credential
from adk_rx.context import ReadonlyContext
from adk_rx.tools.mcp.connection import McpConnection
from adk_rx.tools.mcp.params import (
    ConnectionParams,
    SseConnectionParams,
    StreamableHTTPConnectionParams,
)

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["MAX_CONNECTIONS", "Confirmation", "HeaderProvider", "McpCallOptions", "auth_headers"]

MAX_CONNECTIONS = 32
"""Sessions kept per toolset, one per distinct set of headers."""

HeaderProvider = Callable[[ReadonlyContext], Mapping[str, str] | Awaitable[Mapping[str, str]]]
"""``header_provider``: headers for a call (or a listing), from its context."""

Confirmation = bool | Callable[[dict[str, Any]], bool]
"""``require_confirmation``: always/never, or decided per call from the arguments."""


def auth_headers(config: AuthConfig, credential: AuthCredential) -> dict[str, str]:
    """The headers that carry ``credential`` (an API key in a header, or Authorization)."""
    scheme = config.auth_scheme
    if isinstance(scheme, APIKey) and credential.api_key:
        if scheme.in_ is not APIKeyIn.header:
            return {}  # MCP's transports carry headers only
        return {scheme.name: credential.api_key}
    if credential.http is not None:
        token = credential.http.credentials.token
        headers = dict(credential.http.additional_headers or {})
        if token:
            headers["Authorization"] = f"{credential.http.scheme.capitalize()} {token}"
        return headers
    if credential.oauth2 is not None and credential.oauth2.access_token:
        return {"Authorization": f"Bearer {credential.oauth2.access_token}"}
    return {}


class McpCallOptions:
    """A toolset's options for every call of its tools, and its pool of connections."""

    def __init__(
        self,
        params: ConnectionParams,
        *,
        auth_config: AuthConfig | None = None,
        header_provider: HeaderProvider | None = None,
        require_confirmation: Confirmation = False,
    ) -> None:
        self.params = params
        self.auth_config = auth_config
        self.header_provider = header_provider
        self.require_confirmation = require_confirmation
        self.default = McpConnection(params)
        self._lock = threading.Lock()
        self._pool: OrderedDict[tuple[tuple[str, str], ...], McpConnection] = OrderedDict()

    def needs_confirmation(self, args: dict[str, Any]) -> bool:
        """Whether this call waits for the user's confirmation."""
        policy = self.require_confirmation
        return bool(policy(args) if callable(policy) else policy)

    async def headers(
        self, context: ReadonlyContext | None, tool_context: ToolContext | None = None
    ) -> dict[str, str] | None:
        """The call's headers; None when a credential was asked of the user (no call now)."""
        headers: dict[str, str] = {}
        if self.header_provider is not None and context is not None:
            provided = self.header_provider(context)
            if inspect.isawaitable(provided):
                provided = await provided
            headers.update({str(k): str(v) for k, v in dict(provided).items()})
        if self.auth_config is not None and tool_context is not None:
            # Token requests block: off the loop (the context goes along).
            credential = await asyncio.to_thread(resolve_credential, tool_context, self.auth_config)
            if credential is None:
                return None
            headers.update(auth_headers(self.auth_config, credential))
        return headers

    def connection(self, headers: Mapping[str, str]) -> McpConnection:
        """The session for ``headers`` (the toolset's own when there are none to add)."""
        params = self.params
        if not headers or not isinstance(
            params, StreamableHTTPConnectionParams | SseConnectionParams
        ):
            return self.default
        key = tuple(sorted(headers.items()))
        evicted: McpConnection | None = None
        with self._lock:
            found = self._pool.get(key)
            if found is not None:
                self._pool.move_to_end(key)
                return found
            merged = {**dict(params.headers or {}), **headers}
            found = McpConnection(dataclasses.replace(params, headers=merged))
            self._pool[key] = found
            if len(self._pool) > MAX_CONNECTIONS:
                _, evicted = self._pool.popitem(last=False)
        if evicted is not None:
            _close_soon(evicted)
        return found

    def close(self) -> Any:
        """Closes every session (the toolset's own last, which a caller may await)."""
        with self._lock:
            pooled = list(self._pool.values())
            self._pool.clear()
        for connection in pooled:
            _close_now(connection)
        return self.default.close()


_closing: set[asyncio.Future[Any]] = set()  # closes under way on a loop (kept referenced)


def _close_now(connection: McpConnection) -> None:
    closing = connection.close()
    if inspect.isawaitable(closing):
        future = asyncio.ensure_future(closing)
        _closing.add(future)
        future.add_done_callback(_closing.discard)


def _close_soon(connection: McpConnection) -> None:
    threading.Thread(target=_close_now, args=(connection,), daemon=True).start()
