"""How to reach an MCP server: a subprocess over stdio, or a streamable HTTP endpoint."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import StdioServerParameters

__all__ = ["ConnectionParams", "StdioConnectionParams", "StreamableHTTPConnectionParams"]


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


ConnectionParams = StdioConnectionParams | StreamableHTTPConnectionParams
