"""From what a user writes in ``edges=`` (functions, agents, nodes) to graph nodes."""

from __future__ import annotations

from typing import Any

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.errors import ConfigurationError
from adk_rx.workflow.agent_node import AgentNode
from adk_rx.workflow.function_node import FunctionNode
from adk_rx.workflow.nodes import START, BaseNode
from adk_rx.workflow.retry import RetryConfig

__all__ = ["build_node", "is_node_like"]


def is_node_like(item: Any) -> bool:
    """True for what can become a node: a node, an agent, a callable or ``"START"``."""
    return isinstance(item, BaseNode | BaseAgent) or callable(item) or item == "START"


def build_node(
    node_like: Any,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parameter_binding: str = "state",
) -> BaseNode:
    """The node for ``node_like``, with the given fields overridden.

    A function becomes a :class:`FunctionNode`, an agent an :class:`AgentNode` (an LlmAgent
    without a mode runs single_turn), a node is copied only when a field is overridden.

    Raises:
        ConfigurationError: not a node, an agent or a callable; or an agent renamed.
    """
    if isinstance(node_like, str) and node_like == "START":
        return START
    if isinstance(node_like, BaseNode):
        update: dict[str, Any] = {}
        if name is not None:
            update["name"] = name
        if rerun_on_resume is not None:
            update["rerun_on_resume"] = rerun_on_resume
        if retry_config is not None:
            update["retry_config"] = retry_config
        if timeout is not None:
            update["timeout"] = timeout
        return node_like.model_copy(update=update) if update else node_like
    if isinstance(node_like, BaseAgent):
        if name is not None and name != node_like.name:
            raise ConfigurationError(
                f"an agent node is named after its agent ({node_like.name!r}); build the "
                f"agent with name={name!r} instead"
            )
        if isinstance(node_like, LlmAgent):
            node_like._adopt_as_workflow_node()  # pyright: ignore[reportPrivateUsage]
        return AgentNode(node_like, retry_config=retry_config, timeout=timeout)
    if callable(node_like):
        return FunctionNode(
            func=node_like,
            name=name,
            rerun_on_resume=bool(rerun_on_resume),
            retry_config=retry_config,
            timeout=timeout,
            parameter_binding="node_input" if parameter_binding == "node_input" else "state",
        )
    raise ConfigurationError(
        f"Invalid node type: {type(node_like)}. Node must be a BaseNode, an agent or a callable."
    )
