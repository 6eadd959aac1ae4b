"""NodeCall: an agent called by another part of the tree with an input, at a place it chose.

A workflow runs an agent as a node with the node's input and path; an LlmAgent runs a
delegated sub-agent (``mode``) with its request on the delegation's branch. The call rides on
the called agent's InvocationContext; the agent keeps the branch it was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["NodeCall"]


@dataclass(frozen=True, slots=True)
class NodeCall:
    """The call of one agent, carried on its InvocationContext.

    Attributes:
        agent: the agent called (agents below it ignore the call).
        path: the workflow node path of the run (``"outer@1/inner@1"``; "" outside a workflow).
        node_input: the input.
    """

    agent: BaseAgent
    path: str
    node_input: Any
