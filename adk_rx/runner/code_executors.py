"""Closing the code executors of an agent tree when its Runner closes (stateful
interpreters are child processes)."""

from __future__ import annotations

import warnings

from adk_rx.agents.base import BaseAgent
from adk_rx.code_executors.base import BaseCodeExecutor

__all__ = ["close_code_executors"]


def close_code_executors(agent: BaseAgent) -> None:
    """Closes every ``code_executor`` of the tree (sub-agents and agents behind an
    AgentTool included), once each; a close that fails is a warning, the others go on."""
    seen: set[int] = set()
    closed: set[int] = set()
    pending: list[BaseAgent] = [agent]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        executor = getattr(node, "code_executor", None)
        if isinstance(executor, BaseCodeExecutor) and id(executor) not in closed:
            closed.add(id(executor))
            try:
                executor.close()
            except Exception as exc:
                warnings.warn(f"closing {executor!r} failed: {exc}", RuntimeWarning, stacklevel=2)
        for tool in getattr(node, "tools", ()):
            inner = getattr(tool, "agent", None)
            if isinstance(inner, BaseAgent):
                pending.append(inner)
        pending.extend(node.sub_agents)
