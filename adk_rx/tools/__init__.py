"""Tools: the seam, function tools and the built-in tool instances.

An agent used as a tool (:class:`~adk_rx.agent_tool.AgentTool`) runs a child Runner, so it
lives above the runner, in :mod:`adk_rx.agent_tool`.
"""

from adk_rx.tools.base import BaseTool
from adk_rx.tools.builtins import exit_loop, transfer_to_agent
from adk_rx.tools.files_retrieval import FilesRetrieval
from adk_rx.tools.function import (
    FunctionTool,
    ToolArgumentsError,
    ToolResultError,
    as_tool,
    never_blocks,
)
from adk_rx.tools.load_artifacts import load_artifacts
from adk_rx.tools.load_memory import load_memory
from adk_rx.tools.long_running import LongRunningFunctionTool
from adk_rx.tools.preload_memory import preload_memory

__all__ = [
    "BaseTool",
    "FilesRetrieval",
    "FunctionTool",
    "LongRunningFunctionTool",
    "ToolArgumentsError",
    "ToolResultError",
    "as_tool",
    "exit_loop",
    "load_artifacts",
    "load_memory",
    "never_blocks",
    "preload_memory",
    "transfer_to_agent",
]
