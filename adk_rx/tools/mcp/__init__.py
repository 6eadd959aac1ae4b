"""Model Context Protocol tools, on the official ``mcp`` package (``pip install "adk_rx[mcp]"``).

from mcp import StdioServerParameters
from adk_rx.tools.mcp import McpToolset, StdioConnectionParams

toolset = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command="python", args=["server.py"])
    )
)
agent = LlmAgent(name="assistant", model=..., tools=[toolset])
"""

from adk_rx.tools.mcp.connection import McpConnectionError
from adk_rx.tools.mcp.params import StdioConnectionParams, StreamableHTTPConnectionParams
from adk_rx.tools.mcp.tool import McpTool
from adk_rx.tools.mcp.toolset import McpToolset

__all__ = [
    "McpConnectionError",
    "McpTool",
    "McpToolset",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]
