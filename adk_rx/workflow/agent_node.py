"""An agent as a workflow node: its input, its events, its output.

* An LlmAgent node (single_turn, the default in a workflow) sees the node's input as the
  user's message of its turn (``adk_rx.agents.request_input``: a user event of the node's
  branch in the session view while the run goes on, never stored).
  Its final answer is the node's output: the event keeps the text as content and is marked
  ``node_info.message_as_output`` (with an ``output_schema``, ``Event.output`` holds the
  parsed value).
* A nested Workflow gets the input as its START input and the node's path as its own
  (``NodeCall`` on its context).
* Any other agent runs on the session as it is; its last final text is the output.

Events keep their own author (the agent's name); the engine stamps the node's path on them.
"""

from __future__ import annotations

import json
from typing import Any

from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.call import NodeCall
from adk_rx.agents.llm import LlmAgent
from adk_rx.agents.request_input import to_user_content, with_request
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event, NodeInfo
from adk_rx.workflow.context import Context
from adk_rx.workflow.items import items_of
from adk_rx.workflow.nodes import BaseNode
from adk_rx.workflow.retry import RetryConfig

__all__ = ["AgentNode"]


class AgentNode(BaseNode):
    """Runs ``agent`` as a node (built for every agent placed in a workflow's edges).

    Args:
        agent: the agent; the workflow becomes its parent.
        retry_config, timeout: as on ``BaseNode``.
    """

    def __init__(
        self,
        agent: BaseAgent,
        *,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
    ) -> None:
        if isinstance(agent, LlmAgent) and agent.mode == "task":
            raise ConfigurationError(
                f"agent {agent.name!r}: a task-mode agent as a workflow node is not supported "
                "yet; give it to an LlmAgent as a sub-agent, or use mode='single_turn'"
            )
        super().__init__(
            name=agent.name,
            description=agent.description,
            rerun_on_resume=True,
            retry_config=retry_config,
            timeout=timeout,
        )
        self.agent = agent

    def run(self, ctx: Context, node_input: Any) -> Observable[Any]:
        """The agent's events, the final answer marked as the node's output."""
        return items_of(lambda: self._events(ctx, node_input))

    def _events(self, ctx: Context, node_input: Any) -> Observable[Any]:
        agent = self.agent
        invocation = ctx.invocation_context.copy(
            node_call=NodeCall(agent, ctx.node_path, node_input)
        )
        events = agent.run_async(invocation)
        if not isinstance(agent, LlmAgent):
            if getattr(agent, "is_workflow", False):
                return events
            return events.pipe(ops.do_action(lambda e: self._note_text(ctx, e)))
        if agent.mode == "single_turn" and node_input is not None:
            request = Event(
                author="user",
                invocation_id=invocation.invocation_id,
                content=to_user_content(node_input),
                branch=invocation.branch,
                node_info=NodeInfo(path=ctx.node_path),
            )
            events = with_request(
                events, invocation.session, request, lambda found: _input_position(found, ctx)
            )
        return events.pipe(ops.map(lambda e: self._answer(ctx, agent, e)))

    def _answer(self, ctx: Context, agent: LlmAgent, event: Event) -> Event:
        if event.author != agent.name or not _is_answer(event):
            return event
        text = event.text()
        if agent.output_schema is not None:
            try:
                value = json.loads(text) if text.strip() else None
            except ValueError:
                value = text
            return event.replace(output=value)
        ctx.set_message_output(text)
        return event.replace(node_info=NodeInfo(message_as_output=True))

    @staticmethod
    def _note_text(ctx: Context, event: Event) -> None:
        if _is_answer(event) and event.text():
            ctx.set_message_output(event.text())


def _input_position(events: list[Event], ctx: Context) -> int:
    """Where the input goes: the end, or, in a resumed run, before the node's stored events."""
    if ctx.invocation_context.resume is not None:
        for i, event in enumerate(events):
            info = event.node_info
            if info is not None and info.path == ctx.node_path and event.author != "user":
                return i
    return len(events)


def _is_answer(event: Event) -> bool:
    content = event.content
    return (
        not event.partial
        and content is not None
        and content.role == "model"
        and not event.get_function_calls()
        and bool(event.text())
    )
