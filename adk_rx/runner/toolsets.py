"""Closing the toolsets of an agent tree when its Runner closes (MCP sessions, processes)."""

from __future__ import annotations

import asyncio
import inspect
import warnings
from typing import Any

from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.rx import from_async
from adk_rx.tools.toolset import BaseToolset

__all__ = ["close_toolsets", "toolsets_of"]

# Closes scheduled on a running loop; kept referenced until they finish.
_closing: set[Any] = set()


def toolsets_of(agent: BaseAgent) -> list[BaseToolset]:
    """Every toolset of an agent tree, once each.

    Agents used through a tool are included: a tool whose ``agent`` attribute is an agent
    (an AgentTool) is walked like a sub-agent.
    """
    found: dict[int, BaseToolset] = {}
    seen: set[int] = set()
    pending: list[BaseAgent] = [agent]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for toolset in getattr(node, "toolsets", ()):
            found.setdefault(id(toolset), toolset)
        for tool in getattr(node, "tools", ()):
            inner = getattr(tool, "agent", None)
            if isinstance(inner, BaseAgent):
                pending.append(inner)
        pending.extend(node.sub_agents)
    return list(found.values())


def close_toolsets(agent: BaseAgent, timeout: float = 10.0) -> None:
    """Closes every toolset of the tree; waits for each close unless called on its loop.

    A close that fails is reported as a warning: closing the others goes on.
    """
    for toolset in toolsets_of(agent):
        try:
            result = toolset.close()
            if isinstance(result, Observable):
                result.pipe(ops.ignore_elements(), ops.timeout(timeout)).run()
            elif inspect.isawaitable(result):
                awaitable = result

                async def wait(awaitable: Any = awaitable) -> Any:
                    return await awaitable

                try:
                    asyncio.get_running_loop()
                except RuntimeError:
                    from_async(wait).pipe(ops.timeout(timeout)).run()
                else:  # on a running loop: waiting here would stall it
                    task = asyncio.ensure_future(wait())
                    _closing.add(task)
                    task.add_done_callback(_closing.discard)
        except Exception as exc:
            warnings.warn(f"closing {toolset!r} failed: {exc}", RuntimeWarning, stacklevel=2)
