"""A small order-desk agent on a scripted model that answers by the user's question."""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_rx import LlmAgent, LlmRequest, LlmResponse
from adk_rx.testing import ScriptedLlm

ORDERS = {"1234": "shipped with DHL", "5678": "still being packed"}


def lookup_order(order_id: str) -> dict[str, Any]:
    """Looks an order up."""
    return {"order_id": order_id, "status": ORDERS.get(order_id, "unknown")}


def _answer(request: LlmRequest) -> LlmResponse:
    last = request.contents[-1]
    parts = last.parts or []
    response = parts[0].function_response if parts else None
    if response is not None:
        body = response.response or {}
        return LlmResponse.text(f"Order {body['order_id']} is {body['status']}.")
    text = parts[0].text or "" if parts else ""
    if "boom" in text:
        raise RuntimeError("the model fell over")
    digits = "".join(ch for ch in text if ch.isdigit())
    if not digits:
        return LlmResponse.text("Hello! Ask me about an order.")
    call = types.FunctionCall(name="lookup_order", args={"order_id": digits})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def desk_agent(calls: int = 100) -> LlmAgent:
    """The agent; its model answers up to ``calls`` requests."""
    return LlmAgent(name="desk", model=ScriptedLlm([_answer] * calls), tools=[lookup_order])


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def turn(question: str, answer: str | None, *tool_uses: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "invocation_id": "e-recorded",
        "user_content": user(question),
        "intermediate_data": {
            "tool_uses": list(tool_uses),
            "tool_responses": [],
            "intermediate_responses": [],
        },
        "creation_timestamp": 1700000000.0,
    }
    if answer is not None:
        body["final_response"] = model(answer)
    return body


def evalset_json(*cases: dict[str, Any]) -> dict[str, Any]:
    """An eval set in google-adk's format, with fields adk_rx does not use kept in."""
    return {
        "eval_set_id": "desk_set",
        "name": "desk_set",
        "description": None,
        "eval_cases": list(cases),
        "creation_timestamp": 1700000000.0,
    }


def case(
    eval_id: str, *turns: dict[str, Any], state: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "conversation": list(turns),
        "session_input": {"app_name": "desk", "user_id": "eval_user", "state": state or {}},
        "creation_timestamp": 1700000000.0,
        "rubrics": None,
        "final_session_state": {},
    }
