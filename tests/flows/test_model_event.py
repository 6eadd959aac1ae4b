"""model_event: the one builder of model events, for an LlmAgent's steps and its live flow."""

from __future__ import annotations

from google.genai import types

from adk_rx import FunctionTool, LlmAgent, LongRunningFunctionTool
from adk_rx.flows.model_event import ResponseIds, model_event
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.agents.scripted_agents import invocation_context

AGENT = LlmAgent(name="helper", model=ScriptedLlm([]))


def lookup(order: str) -> dict[str, str]:
    """Looks an order up."""
    return {"order": order}


def ask_manager(amount: int) -> None:
    """Asks a manager to approve a refund."""


def calls(*names: str) -> LlmResponse:
    parts = [types.Part(function_call=types.FunctionCall(name=n, args={})) for n in names]
    return LlmResponse(content=types.Content(role="model", parts=parts))


def test_a_response_that_says_nothing_makes_no_event() -> None:
    ctx = invocation_context(AGENT)
    assert model_event(LlmResponse(), author="helper", ctx=ctx, partial=None) is None
    turn_end = model_event(LlmResponse(turn_complete=True), author="helper", ctx=ctx, partial=True)
    assert turn_end is not None and turn_end.turn_complete


def test_streamed_chunks_share_their_id_with_the_complete_event_after_them() -> None:
    ctx = invocation_context(AGENT)
    ids = ResponseIds()
    chunk = LlmResponse.text("Hel").replace(partial=True)
    events = [
        model_event(r, author="helper", ctx=ctx, partial=r.partial, ids=ids)
        for r in (chunk, chunk, LlmResponse.text("Hello"), LlmResponse.text("Bye"))
    ]
    assert [e.id for e in events if e] == [events[0].id] * 3 + [events[3].id]  # type: ignore[union-attr]
    assert events[3].id != events[0].id  # type: ignore[union-attr]


def test_calls_get_ids_and_long_running_ones_are_marked() -> None:
    ctx = invocation_context(AGENT)
    tools = {"lookup": FunctionTool(lookup), "ask_manager": LongRunningFunctionTool(ask_manager)}
    event = model_event(
        calls("lookup", "ask_manager"), author="helper", ctx=ctx, partial=None, tools=tools
    )
    assert event is not None
    ids = [c.id for c in event.get_function_calls()]
    assert all(i and i.startswith("adk-") for i in ids)
    assert event.long_running_tool_ids == frozenset({ids[1]})


def test_every_field_the_model_reported_is_carried_over() -> None:
    ctx = invocation_context(AGENT, branch="root.helper")
    heard = types.Transcription(text="hello", finished=True)
    response = LlmResponse.text("Hi").replace(
        finish_reason="STOP", model_version="m-1", output_transcription=heard, interrupted=True
    )
    event = model_event(response, author="helper", ctx=ctx, partial=None)
    assert event is not None
    assert (event.author, event.branch, event.invocation_id) == (
        "helper",
        "root.helper",
        ctx.invocation_id,
    )
    assert (event.finish_reason, event.model_version, event.output_transcription) == (
        "STOP",
        "m-1",
        heard,
    )
    assert event.interrupted and event.text() == "Hi"
