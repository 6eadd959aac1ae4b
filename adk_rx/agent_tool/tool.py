"""The AgentTool class: runs its agent as a child run and answers with its final text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from pydantic import ValidationError
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agent_tool.child_confirmation import (
    answer_message,
    pending_request,
    stored_child_run,
    surface,
)
from adk_rx.agent_tool.forwarding_artifacts import ForwardingArtifactService
from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.budget import share_budget
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.runner import Runner
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.tools.base import BaseTool, tool_result_dict
from adk_rx.tools.output_schema import validate_output
from adk_rx.usage import TokenUsage, usage_metadata

if TYPE_CHECKING:
    from adk_rx.context import ToolContext
    from adk_rx.sessions import Session

__all__ = ["AGENT_TOOL", "AgentTool", "streamed_event"]


def _input_schema(agent: BaseAgent) -> Any:
    node: BaseAgent | None = agent
    while node is not None:
        if isinstance(node, LlmAgent):
            return node.input_schema
        node = node.sub_agents[0] if node.sub_agents else None
    return None


AGENT_TOOL = "agent_tool"
"""The ``custom_metadata`` key of a child run's event streamed to the caller."""


def streamed_event(event: Event, tool_context: ToolContext, agent_name: str) -> Event:
    """A child run's event as the caller's subscriber sees it: partial, in the caller's
    invocation and branch, tagged with the call it belongs to."""
    caller = tool_context.invocation_context
    tag = {
        AGENT_TOOL: {
            "call_id": tool_context.function_call_id,
            "agent": agent_name,
            "partial": bool(event.partial),  # a streamed chunk of the child's (not its whole)
        }
    }
    return event.replace(
        partial=True,
        invocation_id=caller.invocation_id,
        branch=caller.branch,
        custom_metadata={**(event.custom_metadata or {}), **tag},
    )


class AgentTool(BaseTool):
    """Runs ``agent`` as a tool, as a child run of the caller's invocation.

    The argument is ``{"request": str}`` (or the agent's ``input_schema``); the result is
    ``{"result": <final text>}`` (the validated value for an agent with an ``output_schema``;
    ``{}`` when the agent said nothing). The child run has a private in-memory session seeded
    with the caller's state, and uses the caller's artifacts (those of the caller's session),
    memory service, schedulers and, with ``include_plugins``, plugins. Its state writes reach
    the caller's state, its token usage is added to the caller's function-response event, and
    disposing (or a deadline of) the caller's run cancels it.

    With ``stream_events``, every event of the child run reaches the caller's subscriber as
    it happens: as a partial event (never stored in the caller's session) authored by the
    child's agent, in the caller's invocation and branch, with
    ``custom_metadata["agent_tool"] = {"call_id": <the call's id>, "agent": <agent name>,
    "partial": <whether the child's event was a streamed chunk>}``::

        caller:  --call(helper)----------------------------response--final|
        child:              --h1(partial)--h2--h3(final)|
        stream:  --call-----h1*----------h2*--h3*--------response--final|   (* partial)

    Args:
        agent: the agent to run (it must not belong to another agent tree).
        skip_summarization: make the tool's response final, so the caller's model is not
            called again to summarise it.
        include_plugins: let the caller's plugins see the child run's model and tool calls.
        stream_events: forward the child run's events to the caller's subscriber.
    """

    def __init__(
        self,
        agent: BaseAgent,
        skip_summarization: bool = False,
        include_plugins: bool = True,
        stream_events: bool = False,
    ) -> None:
        if not isinstance(agent, BaseAgent):
            raise ConfigurationError(f"AgentTool needs an agent, got {agent!r}")
        # ``request: string``, or the JSON schema of the agent's input schema.
        schema = _input_schema(agent)
        parameters = (
            schema.model_json_schema()
            if schema is not None
            else {
                "type": "object",
                "properties": {"request": {"type": "string"}},
                "required": ["request"],
            }
        )
        super().__init__(name=agent.name, description=agent.description, parameters=parameters)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins
        self.stream_events = stream_events
        self.reports_progress = stream_events  # the child's events ride on the progress sink

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Runs the agent as a child run; emits ``{"result": text}``."""
        schema = _input_schema(self.agent)
        if schema is not None:
            try:
                text = schema.model_validate(dict(args)).model_dump_json()
            except ValidationError as exc:
                return rx.throw(ValueError(f"invalid arguments for {self.name}: {exc}"))
        else:
            request = args.get("request")
            if not isinstance(request, str):
                return rx.throw(ValueError(f"{self.name} needs a string argument 'request'"))
            text = request
        return rx.defer(lambda _: self._child_run(text, tool_context))

    def _child_runner(self, tool_context: ToolContext) -> Runner:
        caller = tool_context.invocation_context
        plugins = caller.services.plugins
        runner = Runner(
            app_name=caller.app_name,
            agent=self.agent,
            session_service=InMemorySessionService(),
            artifact_service=(
                ForwardingArtifactService(tool_context)
                if caller.services.artifact_service is not None
                else None
            ),
            memory_service=caller.services.memory_service,
            plugins=plugins.plugins if self.include_plugins and plugins is not None else None,
            io_scheduler=caller.services.io_scheduler,
            timer_scheduler=caller.services.timer_scheduler,
        )
        if caller.trace is not None:  # the child run reports where the caller's run does
            runner.services = replace(runner.services, telemetry=caller.trace.invocation.telemetry)
        return runner

    def _child_run(self, text: str, tool_context: ToolContext) -> Observable[Any]:
        caller = tool_context.invocation_context
        runner = self._child_runner(tool_context)
        service = runner.session_service
        seen: list[Event] = []
        usage = [TokenUsage()]
        resumed = (
            stored_child_run(tool_context) if tool_context.tool_confirmation is not None else None
        )
        if resumed is None:
            message = types.Content(role="user", parts=[types.Part(text=text)])
        else:  # the caller's user answered a confirmation asked inside: go on from there
            message = answer_message(tool_context, resumed[1])
            seen.extend([*resumed[0], Event(author="user", content=message)])

        def on_event(event: Event) -> None:
            if self.stream_events:
                tool_context.report_progress(streamed_event(event, tool_context, self.agent.name))
            for key, value in event.actions.state_delta.items():
                tool_context.state[key] = value
            if not event.partial:
                seen.append(event)
                usage[0] += TokenUsage.of(event.usage_metadata)

        def result(_: Any) -> Any:
            if usage[0].responses:
                tool_context.usage_metadata = usage_metadata(usage[0])
            request = pending_request(seen)
            if request is not None:
                return surface(tool_context, self.agent.name, seen, request)
            if self.skip_summarization:
                tool_context.actions.skip_summarization = True
            return self._answer(seen[-1] if seen else None)

        def replayed(session: Session) -> Observable[Session]:
            past = [service.append_event(session, event) for event in resumed[0]] if resumed else []
            return rx.concat(*past).pipe(ops.to_list(), ops.map(lambda _: session))

        state = {k: v for k, v in tool_context.state.items() if not k.startswith("temp:")}
        session = service.create_session(
            app_name=runner.app_name, user_id=caller.user_id, state=state
        )
        if resumed is not None:
            session = session.pipe(ops.flat_map(replayed))
        return session.pipe(
            ops.flat_map(
                lambda session: runner.run_async(
                    user_id=caller.user_id,
                    session_id=session.id,
                    new_message=message,
                    run_config=share_budget(
                        caller.run_config.model_copy(update={"timeout": None}),
                        caller.shared.budget,
                    ),
                )
            ),
            ops.do_action(on_event),
            ops.to_list(),
            ops.map(result),
        )

    def _answer(self, last: Event | None) -> dict[str, Any]:
        if last is None or not last.text():
            return {}
        value = last.text()
        output_schema = getattr(self.agent, "output_schema", None)
        if output_schema is not None:
            try:
                return tool_result_dict(validate_output(output_schema, value))
            except ValidationError:
                pass
        return {"result": value}
