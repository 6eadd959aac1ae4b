"""Workflow: google-adk 2.13's graph workflow, as an agent of adk_rx.

A Workflow runs as any agent does: as the agent of a Runner (its input is the user's
message), as a sub-agent of another agent, or as a node of another workflow (its input is
the node's input, its output its terminal node's output). Agents placed in its edges become
its sub-agents, so the agent tree, transfers and resumption see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import reactivex as rx
from reactivex import Observable

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.workflow.agent_node import AgentNode
from adk_rx.workflow.graph import Graph
from adk_rx.workflow.retry import RetryConfig
from adk_rx.workflow.run import GraphRun

if TYPE_CHECKING:
    from adk_rx.callback_types import AfterAgentCallback, BeforeAgentCallback, Callbacks

__all__ = ["Workflow"]


class Workflow(BaseAgent):
    """A graph of nodes (functions, agents, other workflows) joined by edges.

    Each node runs when a predecessor completes (a join, when all of them have), with the
    predecessor's output as its input; a node's route picks which routed edges are followed.
    Independent nodes run at once. Function nodes' events are authored by the workflow,
    agent nodes' by their agent; each event names its node in ``node_info.path``.

    Marble diagram (``START -> a -> (b, c) -> join``; b is slower than c)::

        a:     --a|
        b:        ------b|
        c:        --c|
        join:            --{b, c}|
        wf:    --a---c---b--{b, c}|

        a node fails after its retries:   --a---X    (the others are disposed)
        disposed while b and c run:       --a---|    (b and c are cancelled; join never starts)

    Args:
        name: the workflow's name (an identifier).
        edges: :class:`~adk_rx.workflow.Edge` objects and chains, see ``graph.py``.
        description: what the workflow does.
        max_concurrency: graph-scheduled node runs at once (None or <= 0: no limit); dynamic
            nodes (``ctx.run_node``) do not count.
        retry_config, timeout: for the whole workflow when it is a node of another one.
        rerun_on_resume: accepted for google-adk compatibility (a workflow always continues
            where it stopped).
        before_agent_callback, after_agent_callback: as for every agent.

    Raises:
        GraphValidationError: the graph cannot run (see ``graph.py``).
    """

    is_workflow: ClassVar[bool] = True

    def __init__(
        self,
        *,
        name: str,
        edges: Sequence[Any] | None = None,
        description: str = "",
        max_concurrency: int | None = None,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
        rerun_on_resume: bool = True,
        state_schema: Any = None,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
    ) -> None:
        if edges is not None and not isinstance(edges, list | tuple):
            raise ConfigurationError(f"edges of workflow {name!r} must be a list")
        graph = Graph(list(edges)) if edges else None
        agents = [n.agent for n in graph.walk() if isinstance(n, AgentNode)] if graph else []
        super().__init__(
            name=name,
            description=description,
            sub_agents=agents,
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
        )
        self._set("edges", tuple(edges or ()))
        self._set("graph", graph)
        self._set("max_concurrency", max_concurrency)
        self._set("retry_config", retry_config)
        self._set("timeout", timeout)
        self._set("rerun_on_resume", rerun_on_resume)
        self._set("state_schema", state_schema)

    edges: tuple[Any, ...]
    graph: Graph | None
    max_concurrency: int | None
    retry_config: RetryConfig | None
    timeout: float | None
    rerun_on_resume: bool
    state_schema: Any

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        if self.graph is None:
            return rx.empty()
        call = ctx.node_call
        if call is not None and call.agent is self:
            node_input, path = call.node_input, call.path
        else:
            node_input, path = ctx.user_content, f"{self.name}@1"
        inner = ctx.copy(node_call=None)
        return rx.defer(lambda _: GraphRun(self, inner, node_input, path).events())
