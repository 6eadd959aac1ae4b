"""One LLM step: the event ids of a model call's responses (streamed chunks included)."""

from __future__ import annotations

from adk_rx import LlmAgent, RunConfig, StreamingMode
from adk_rx.testing import ScriptedLlm
from tests.tool_harness import Harness, call, calls

SSE = RunConfig(streaming_mode=StreamingMode.SSE)


def get_weather(city: str) -> dict[str, str]:
    """Returns the forecast for a city."""
    return {"city": city, "forecast": "sunny"}


def test_streamed_chunks_share_the_id_of_the_complete_event_that_follows_them() -> None:
    llm = ScriptedLlm([["It is ", "sunny."], ["Bye", " now."]])
    harness = Harness(LlmAgent(name="root", model=llm))

    first = harness.turn("weather?", run_config=SSE)
    second = harness.turn("bye", run_config=SSE)

    assert [bool(e.partial) for e in first] == [True, True, False]
    assert len({e.id for e in first}) == 1
    assert len({e.id for e in second}) == 1 and second[0].id != first[0].id


def test_each_complete_response_and_each_tool_response_gets_its_own_id() -> None:
    llm = ScriptedLlm(
        [
            [
                calls(call("get_weather", {"city": "Oslo"}), partial=True),
                calls(call("get_weather", {"city": "Oslo"})),
            ],
            ["Sunny", " in Oslo."],
        ]
    )
    events = Harness(LlmAgent(name="root", model=llm, tools=[get_weather])).turn(run_config=SSE)

    kinds = [
        (
            "partial"
            if e.partial
            else "call"
            if e.get_function_calls()
            else "response"
            if e.get_function_responses()
            else "text"
        )
        for e in events
    ]
    assert kinds == ["partial", "call", "response", "partial", "partial", "text"]
    partial_call, full_call, response, chunk1, chunk2, text = events
    assert partial_call.id == full_call.id
    assert len({full_call.id, response.id, text.id}) == 3
    assert chunk1.id == chunk2.id == text.id


def test_without_streaming_every_response_has_a_fresh_id() -> None:
    llm = ScriptedLlm([calls(call("get_weather", {"city": "Rome"})), "Warm."])
    events = Harness(LlmAgent(name="root", model=llm, tools=[get_weather])).turn()

    assert len(events) == 3 and len({e.id for e in events}) == 3
