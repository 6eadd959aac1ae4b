"""Resuming tool calls that waited for a human confirmation.

A tool that calls ``tool_context.request_confirmation(...)`` (or a FunctionTool with
``require_confirmation``) makes the flow emit an ``adk_request_confirmation`` function call.
The user answers with a FunctionResponse to that call, e.g. ``{"confirmed": true}``. On the
next step of the agent that asked, the original calls run again with the answer in
``tool_context.tool_confirmation``; their responses are emitted before the model is called.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.events import CONFIRMATION_FUNCTION, ToolConfirmation
from adk_rx.flows.functions import handle_function_calls, user_answers
from adk_rx.tools.toolset import toolset_tools

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

__all__ = ["resume_confirmations"]


def _answer(response: Mapping[str, Any] | None) -> ToolConfirmation:
    data: Any = dict(response or {})
    if set(data) == {"response"} and isinstance(data["response"], str):
        try:
            data = json.loads(data["response"])
        except json.JSONDecodeError:
            data = {}
    if not isinstance(data, dict):
        data = {}
    return ToolConfirmation(
        hint=str(data.get("hint", "")),
        confirmed=bool(data.get("confirmed", False)),
        payload=data.get("payload"),
    )


def resume_confirmations(agent: LlmAgent, ctx: InvocationContext) -> Observable[Any] | None:
    """The re-run of confirmed (or rejected) calls, or None when there is nothing to resume."""
    events = ctx.session.events
    responses = user_answers(events, CONFIRMATION_FUNCTION)
    if not responses:  # asked before the comprehension: a turn with no answers makes neither
        return None
    answers = {r.id: _answer(r.response) for r in responses}
    originals: list[types.FunctionCall] = []
    confirmations: dict[str, ToolConfirmation] = {}
    for event in reversed(events[:-1]):
        if event.author != agent.name:
            continue
        for call in event.get_function_calls():
            if call.name != CONFIRMATION_FUNCTION or call.id not in answers:
                continue
            original = (call.args or {}).get("originalFunctionCall")
            if not isinstance(original, dict):
                continue
            fc = types.FunctionCall.model_validate(original)
            if fc.id and fc.id not in confirmations:
                originals.append(fc)
                confirmations[fc.id] = answers[call.id]
    if not originals:
        return None
    tools = agent.tools_by_name(ctx)
    if not agent.toolsets:
        return handle_function_calls(agent, ctx, originals, tools, confirmations)

    def resume(found: list[BaseTool]) -> Observable[Any]:
        every = {**tools, **{tool.name: tool for tool in found}}
        return handle_function_calls(agent, ctx, originals, every, confirmations)

    return toolset_tools(agent, ctx).pipe(ops.flat_map(resume))
