"""How to reach an MCP server: a subprocess over stdio, a streamable HTTP endpoint, or an SSE
endpoint (the older HTTP transport)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import StdioServerParameters

__all__ = [
    "ConnectionParams",
    "HttpConnectionParams",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]


@dataclass(frozen=True)
class StdioConnectionParams:
    """An MCP server started as a subprocess, spoken to over its stdin and stdout.

    Args:
        server_params: ``mcp.StdioServerParameters(command=..., args=[...], env=..., cwd=...)``.
        timeout: seconds allowed for each request (a tool call included); connecting gets at
            least 30 s, since a server may be slow to start.
    """

    server_params: StdioServerParameters
    timeout: float = 5.0


@dataclass(frozen=True)
class StreamableHTTPConnectionParams:
    """An MCP server at a streamable HTTP endpoint.

    Args:
        url: the endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: extra HTTP headers sent with every request (authorization, ...).
        timeout: seconds allowed for each request (a tool call included); connecting gets at
            least 30 s, since a server may be slow to start.
    """

    url: str
    headers: Mapping[str, str] | None = None
    timeout: float = 5.0


@dataclass(frozen=True)
class SseConnectionParams:
    """An MCP server at an SSE endpoint (MCP's HTTP+SSE transport).

    Args:
        url: the SSE endpoint, e.g. ``http://127.0.0.1:8000/sse``.
        headers: extra HTTP headers sent with every request (authorization, ...).
        timeout: seconds allowed for each request (a tool call included); connecting gets at
            least 30 s.
        sse_read_timeout: seconds the event stream may stay silent before it is dropped.
    """

    url: str
    headers: Mapping[str, str] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0


HttpConnectionParams = StreamableHTTPConnectionParams | SseConnectionParams
"""The parameters of a server reached over HTTP (headers apply)."""

ConnectionParams = StdioConnectionParams | StreamableHTTPConnectionParams | SseConnectionParams
