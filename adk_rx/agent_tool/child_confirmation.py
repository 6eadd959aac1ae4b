"""A confirmation asked inside an AgentTool's child run, surfaced to the caller and resumed.

When the child run stops on an ``adk_request_confirmation`` call, the AgentTool asks the
caller's user instead (``tool_context.request_confirmation``), with the child run's events in
the request's payload, so everything needed to go on is in the caller's stored events::

    caller:  call helper -> [confirm helper?] -> {"error": waiting}   ...user answers...
    resume:  child session rebuilt from the payload -> the answer goes to the inner call
             -> the inner tool runs with its confirmation -> helper's final text
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_rx.events import CONFIRMATION_FUNCTION, Event

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["WAITING", "answer_message", "pending_request", "stored_child_run", "surface"]

WAITING = "waiting for the user to confirm a call inside this agent"
_KEY = "adk_rx_child_run"


def pending_request(events: Sequence[Event]) -> types.FunctionCall | None:
    """The child run's unanswered confirmation request, if it stopped on one."""
    answered = {r.id for e in events for r in e.get_function_responses() if r.id}
    for event in reversed(events):
        for call in event.get_function_calls():
            if (
                call.name == CONFIRMATION_FUNCTION
                and call.id in (event.long_running_tool_ids or ())
                and call.id not in answered
            ):
                return call
    return None


def surface(
    tool_context: ToolContext, agent_name: str, events: Sequence[Event], request: types.FunctionCall
) -> dict[str, Any]:
    """Asks the caller's user; returns the response the caller's model sees meanwhile."""
    asked = (request.args or {}).get("toolConfirmation") or {}
    hint = f"{agent_name}: {asked.get('hint') or 'please confirm'}"
    tool_context.request_confirmation(
        hint=hint,
        payload={
            _KEY: {
                "request_id": request.id,
                "events": [e.to_dict() for e in events if not e.partial],
            }
        },
    )
    return {"error": WAITING}


def stored_child_run(tool_context: ToolContext) -> tuple[list[Event], str] | None:
    """The child run's events and pending request id that this call asked the user about."""
    call_id = tool_context.function_call_id
    for event in reversed(tool_context.invocation_context.session.events):
        for call in event.get_function_calls():
            if call.name != CONFIRMATION_FUNCTION:
                continue
            args = call.args or {}
            original = args.get("originalFunctionCall") or {}
            if original.get("id") != call_id:
                continue
            payload = (args.get("toolConfirmation") or {}).get("payload") or {}
            child = payload.get(_KEY) if isinstance(payload, dict) else None
            if not isinstance(child, dict):
                return None
            events = [Event.from_dict(e) for e in child.get("events", [])]
            return events, str(child.get("request_id"))
    return None


def answer_message(tool_context: ToolContext, request_id: str) -> types.Content:
    """The user message that answers the child's request with the caller's user's answer."""
    confirmation = tool_context.tool_confirmation
    assert confirmation is not None
    response = {"confirmed": confirmation.confirmed, "payload": confirmation.payload}
    part = types.Part(
        function_response=types.FunctionResponse(
            id=request_id, name=CONFIRMATION_FUNCTION, response=response
        )
    )
    return types.Content(role="user", parts=[part])
