"""NodeCall: what a workflow hands the agent it runs as a node (its input and its path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["NodeCall"]


@dataclass(frozen=True, slots=True)
class NodeCall:
    """The call of one agent as a workflow node, carried on its InvocationContext.

    Attributes:
        agent: the agent called (agents below it ignore the call).
        path: the node path of the run (``"outer@1/inner@1"``).
        node_input: the node's input.
    """

    agent: BaseAgent
    path: str
    node_input: Any
