"""AgentTool(stream_events=True): the child run's events reach the caller's subscriber as they
happen, partial and tagged, and never enter the caller's session."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.scheduler import NewThreadScheduler

from adk_rx import AgentTool, LlmAgent, RunConfig, StreamingMode
from adk_rx.testing import ScriptedLlm
from tests.tool_harness import SESSION, USER, Harness, call, calls

pytestmark = pytest.mark.timeout(30)


def _harness(inner_script: list[Any], **tool: Any) -> tuple[Harness, ScriptedLlm]:
    def lookup(city: str) -> dict[str, Any]:
        """Looks a city up."""
        return {"city": city, "temp": 21}

    inner = LlmAgent(name="helper", model=ScriptedLlm(inner_script), tools=[lookup])
    outer_llm = ScriptedLlm([calls(call("helper", {"request": "weather?"}, "c-1")), "It is 21."])
    outer = LlmAgent(name="outer", model=outer_llm, tools=[AgentTool(inner, **tool)])
    return Harness(outer), outer_llm


def test_the_child_events_reach_the_caller_between_its_call_and_its_response() -> None:
    harness, _ = _harness(
        [calls(call("lookup", {"city": "Paris"}, "i-1")), "Paris: 21"], stream_events=True
    )

    events = harness.turn()

    streamed = [e for e in events if (e.custom_metadata or {}).get("agent_tool")]
    assert [e.author for e in streamed] == ["helper", "helper", "helper"]
    assert all(e.partial for e in streamed)
    assert {e.invocation_id for e in streamed} == {events[0].invocation_id}
    assert [e.custom_metadata["agent_tool"] for e in streamed] == [  # type: ignore[index]
        {"call_id": "c-1", "agent": "helper", "partial": False}
    ] * 3
    kinds = [
        "call" if e.get_function_calls() else "response" if e.get_function_responses() else e.text()
        for e in events
    ]
    assert kinds == ["call", "call", "response", "Paris: 21", "response", "It is 21."]
    assert [e.author for e in events] == ["outer", "helper", "helper", "helper", "outer", "outer"]


def test_streamed_events_are_never_stored_in_the_caller_session() -> None:
    harness, outer_llm = _harness(["Paris: 21"], stream_events=True)

    harness.turn()

    stored = harness.session().events
    assert [e.author for e in stored] == ["user", "outer", "outer", "outer"]
    assert not any((e.custom_metadata or {}).get("agent_tool") for e in stored)
    # the caller's model never sees the child's events either
    assert "Paris: 21" not in str(outer_llm.requests[1].contents[:-1])


def test_without_stream_events_the_child_stays_a_black_box() -> None:
    harness, _ = _harness(["Paris: 21"])

    events = harness.turn()

    assert [e.author for e in events] == ["outer", "outer", "outer"]


def test_the_childs_partial_chunks_are_streamed_as_they_come() -> None:
    harness, _ = _harness([["Par", "is: ", "21"]], stream_events=True)

    events = harness.turn(run_config=RunConfig(streaming_mode=StreamingMode.SSE))

    chunks = [e for e in events if e.author == "helper"]
    assert [e.text() for e in chunks] == ["Par", "is: ", "21", "Paris: 21"]
    assert [e.custom_metadata["agent_tool"]["partial"] for e in chunks] == [  # type: ignore[index]
        True,
        True,
        True,
        False,
    ]


def test_child_events_arrive_while_the_child_still_runs() -> None:
    release = threading.Event()
    seen_first = threading.Event()

    def slow(request: Any) -> str:
        assert release.wait(10)
        return "done"

    harness, _ = _harness(
        [calls(call("lookup", {"city": "Oslo"}, "i-1")), slow], stream_events=True
    )
    seen: list[Any] = []

    def on_next(event: Any) -> None:
        seen.append(event)
        if event.author == "helper" and event.get_function_responses():
            seen_first.set()

    run = harness.runner.run_async(user_id=USER, session_id=SESSION, new_message="hi")
    finished = threading.Event()
    run.pipe(ops.subscribe_on(NewThreadScheduler())).subscribe(on_next, on_completed=finished.set)
    assert seen_first.wait(10)  # the child's tool response is out before its model answered
    assert not any(e.text() == "done" for e in seen)
    release.set()
    assert finished.wait(10)
