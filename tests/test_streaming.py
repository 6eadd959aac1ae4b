"""StreamingMode.SSE through the Runner: partial events, aggregation, streamed function calls."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from reactivex import operators as ops

from adk_rx import LlmAgent, LlmResponse, RunConfig, StreamingMode
from adk_rx.events import Event
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import (
    USER,
    ChunkStream,
    in_memory_runner,
    new_session,
    stored,
    warm_pool,
)

pytestmark = pytest.mark.timeout(30)

SSE = RunConfig(streaming_mode=StreamingMode.SSE)


def _calls(*calls: types.FunctionCall, partial: bool | None = None) -> LlmResponse:
    parts = [types.Part(function_call=call) for call in calls]
    return LlmResponse(content=model_content(*parts), partial=partial)


def _run(runner: Any, message: str = "hi", config: RunConfig = SSE) -> list[Event]:
    return (
        runner.run_async(user_id=USER, session_id="s1", new_message=message, run_config=config)
        .pipe(ops.to_list())
        .run()
    )


def test_partial_events_are_emitted_but_only_the_aggregate_is_stored() -> None:
    runner = in_memory_runner(LlmAgent(name="poet", model=ScriptedLlm([["Ro", "ses", " red"]])))
    new_session(runner)
    seen_in_store: list[int] = []

    def store_size(event: Event) -> None:
        seen_in_store.append(len(stored(runner)))

    events = (
        runner.run_async(user_id=USER, session_id="s1", new_message="poem", run_config=SSE)
        .pipe(ops.do_action(store_size), ops.to_list())
        .run()
    )

    assert [(e.partial, e.text()) for e in events] == [
        (True, "Ro"),
        (True, "ses"),
        (True, " red"),
        (None, "Roses red"),
    ]
    assert seen_in_store == [1, 1, 1, 2]  # the aggregate was stored before it was emitted
    assert [(e.author, e.text()) for e in stored(runner)] == [
        ("user", "poem"),
        ("poet", "Roses red"),
    ]


def test_a_partial_function_call_is_never_executed() -> None:  # scenario 24
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Weather of a city."""
        ran.append(city)
        return "sunny"

    only_chunk = _calls(types.FunctionCall(name="get_weather", args={"city": "Oslo"}), partial=True)
    llm = ScriptedLlm([lambda _: rx.just(only_chunk)])  # no aggregate follows
    agent = LlmAgent(name="forecaster", model=llm, tools=[get_weather], max_steps=1)
    runner = in_memory_runner(agent)
    new_session(runner)

    events = _run(runner)

    assert len(events) == 1
    assert events[0].partial is True
    assert [c.name for c in events[0].get_function_calls()] == ["get_weather"]
    assert ran == []
    assert all(not e.get_function_responses() for e in events)
    assert [e.author for e in stored(runner)] == ["user"]


def test_streamed_parallel_calls_each_execute_exactly_once() -> None:  # scenario 25
    runs: dict[str, int] = {"temperature": 0, "condition": 0}
    lock = threading.Lock()

    def get_temperature(city: str) -> int:
        """Temperature."""
        with lock:
            runs["temperature"] += 1
        return 21

    def get_condition(city: str) -> str:
        """Sky condition."""
        with lock:
            runs["condition"] += 1
        return "clear"

    temperature = types.FunctionCall(
        id="adk-temperature-id", name="get_temperature", args={"city": "Rome"}
    )
    condition = types.FunctionCall(
        id="adk-condition-id", name="get_condition", args={"city": "Rome"}
    )
    llm = ScriptedLlm(
        [
            [
                _calls(temperature, partial=True),
                _calls(condition, partial=True),
                _calls(temperature, condition),
            ],
            "done",
        ]
    )
    agent = LlmAgent(name="forecaster", model=llm, tools=[get_temperature, get_condition])
    runner = in_memory_runner(agent)
    new_session(runner)

    events = _run(runner)

    partial_calls = [e for e in events if e.partial and e.get_function_calls()]
    complete_calls = [e for e in events if not e.partial and e.get_function_calls()]
    assert len(partial_calls) == 2
    assert [[c.id for c in e.get_function_calls()] for e in complete_calls] == [
        ["adk-temperature-id", "adk-condition-id"]
    ]
    assert runs == {"temperature": 1, "condition": 1}
    responses = [r for e in events for r in e.get_function_responses()]
    assert sorted(r.id or "" for r in responses) == ["adk-condition-id", "adk-temperature-id"]
    assert events[-1].text() == "done"


def test_streamed_argument_chunks_are_reassembled_and_run_once() -> None:  # scenario 26
    received: list[dict[str, str]] = []

    def plan_route(origin: str, destination: str) -> str:
        """Plans a route."""
        received.append({"origin": origin, "destination": destination})
        return "A2 motorway"

    call_id = "adk-route-id"
    llm = ScriptedLlm(
        [
            [
                _calls(types.FunctionCall(id=call_id, args={"origin": "Krakow"}), partial=True),
                _calls(
                    types.FunctionCall(id=call_id, args={"destination": "Warsaw"}), partial=True
                ),
                _calls(
                    types.FunctionCall(
                        id=call_id,
                        name="plan_route",
                        args={"origin": "Krakow", "destination": "Warsaw"},
                    )
                ),
            ],
            "take the A2",
        ]
    )
    runner = in_memory_runner(LlmAgent(name="router", model=llm, tools=[plan_route]))
    new_session(runner)

    events = _run(runner)

    assert received == [{"origin": "Krakow", "destination": "Warsaw"}]
    ids = {c.id for e in events for c in e.get_function_calls()}
    assert ids == {call_id}
    responses = [r for e in events for r in e.get_function_responses()]
    assert [(r.id, r.response) for r in responses] == [(call_id, {"result": "A2 motorway"})]
    assert events[-1].text() == "take the A2"


def test_a_slow_consumer_of_run_holds_a_thread_producer_back() -> None:
    pool = warm_pool(1)
    stream = ChunkStream(2_000)
    runner = in_memory_runner(
        LlmAgent(name="writer", model=ScriptedLlm([stream.from_thread(pool)])), io_scheduler=pool
    )
    new_session(runner)
    lags: list[int] = []
    consumed = 0

    with runner.run(
        user_id=USER, session_id="s1", new_message="go", run_config=SSE, max_buffer=8
    ) as events:  # type: ignore[attr-defined]
        for _ in events:
            consumed += 1
            lags.append(stream.produced - consumed)

    assert consumed == 2_001
    # 8 buffered, one blocked in on_next, one being pulled from the generator
    assert max(lags) <= 10
    assert stream.closed.is_set()
    pool.executor.shutdown()


def test_sse_and_none_modes_store_the_same_history() -> None:
    def script() -> ScriptedLlm:
        return ScriptedLlm([["a", "b", "c"]])

    streamed = in_memory_runner(LlmAgent(name="writer", model=script()))
    plain = in_memory_runner(LlmAgent(name="writer", model=script()))
    for runner in (streamed, plain):
        new_session(runner)
    _run(streamed, config=SSE)
    _run(plain, config=RunConfig())

    def texts(runner: Any) -> list[tuple[str, str, bool | None]]:
        return [(e.author, e.text(), e.partial) for e in stored(runner)]

    assert texts(streamed) == texts(plain) == [("user", "hi", None), ("writer", "abc", None)]


def test_after_model_replacing_streamed_chunks_stores_only_the_aggregate() -> None:
    def shout(callback_context: Any, llm_response: LlmResponse) -> LlmResponse:
        said = "".join(p.text or "" for p in (llm_response.content.parts or []))
        return LlmResponse(content=model_content(types.Part(text=said.upper())))

    agent = LlmAgent(name="poet", model=ScriptedLlm([["Ro", "ses"]]), after_model_callback=shout)
    runner = in_memory_runner(agent)
    new_session(runner)
    events = _run(runner, "poem")
    assert [(bool(e.partial), e.text()) for e in events] == [
        (True, "RO"),
        (True, "SES"),
        (False, "ROSES"),
    ]
    assert [(e.author, e.text()) for e in stored(runner)] == [("user", "poem"), ("poet", "ROSES")]
