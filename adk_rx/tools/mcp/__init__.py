"""Model Context Protocol tools, on the official ``mcp`` package (``pip install "adk_rx[mcp]"``).

from mcp import StdioServerParameters
from adk_rx.tools.mcp import McpToolset, StdioConnectionParams

toolset = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command="python", args=["server.py"])
    )
)
agent = LlmAgent(name="assistant", model=..., tools=[toolset])

``SseConnectionParams`` reaches a server over MCP's SSE transport. The toolset also takes
``auth_scheme`` / ``auth_credential`` (``adk_rx.auth``), ``header_provider`` (headers per call),
``require_confirmation`` (a bool or a callable of the arguments) and ``use_mcp_resources``
(the ``load_mcp_resource`` tool of :mod:`adk_rx.tools.mcp.load_mcp_resource`).
"""

from adk_rx.tools.mcp.connection import McpConnectionError
from adk_rx.tools.mcp.load_mcp_resource import LoadMcpResourceTool
from adk_rx.tools.mcp.params import (
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from adk_rx.tools.mcp.tool import McpTool
from adk_rx.tools.mcp.toolset import McpToolset

__all__ = [
    "LoadMcpResourceTool",
    "McpConnectionError",
    "McpTool",
    "McpToolset",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]
