"""AgentTool: another agent, called like a function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from pydantic import ValidationError
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.flows.tool_call import tool_result_dict
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["AgentTool"]


def _input_schema(agent: BaseAgent) -> Any:
    from adk_rx.agents.llm import LlmAgent

    node: BaseAgent | None = agent
    while node is not None:
        if isinstance(node, LlmAgent):
            return node.input_schema
        node = node.sub_agents[0] if node.sub_agents else None
    return None


class AgentTool(BaseTool):
    """Runs ``agent`` as a tool in a private in-memory session seeded with the caller's state.

    The argument is ``{"request": str}`` (or the agent's ``input_schema``); the result is
    ``{"result": <final text>}`` (``{}`` when the agent said nothing). The inner agent's events
    are not streamed to the caller; its state writes reach the caller's state.

    Args:
        agent: the agent to run (it must not belong to another agent tree).
        skip_summarization: make the tool's response final, so the caller's model is not
            called again to summarise it.
    """

    def __init__(self, agent: BaseAgent, skip_summarization: bool = False) -> None:
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

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Runs the agent; emits ``{"result": text}``."""
        from adk_rx.agents.llm import LlmAgent
        from adk_rx.runner import InMemoryRunner

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
        caller = tool_context.invocation_context
        runner = InMemoryRunner(self.agent, app_name=caller.agent.name)
        if caller.trace is not None:  # the inner run reports where the caller's run does
            runner.telemetry = caller.trace.invocation.telemetry
        state = dict(tool_context.state)
        last: list[Event] = []

        def on_event(event: Event) -> None:
            for key, value in event.actions.state_delta.items():
                tool_context.state[key] = value
            if not event.partial:
                last[:] = [event]

        def result(_: Any) -> Any:
            if self.skip_summarization:
                tool_context.actions.skip_summarization = True
            if not last or not last[0].text():
                return {}
            value = last[0].text()
            output_schema = self.agent.output_schema if isinstance(self.agent, LlmAgent) else None
            if output_schema is not None:
                from adk_rx.flows.output_schema import validate_output

                try:
                    return tool_result_dict(validate_output(output_schema, value))
                except ValidationError:
                    pass
            return {"result": value}

        message = types.Content(role="user", parts=[types.Part(text=text)])
        return runner.session_service.create_session(
            app_name=runner.app_name, user_id="tmp_user", state=state
        ).pipe(
            ops.flat_map(
                lambda session: runner.run_async(
                    user_id="tmp_user", session_id=session.id, new_message=message
                )
            ),
            ops.do_action(on_event),
            ops.to_list(),
            ops.map(result),
        )
