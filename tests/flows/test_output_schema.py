"""Structured output: the schema in the request, set_model_response, validation and repair."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from adk_rx import LlmAgent, OutputSchemaError
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import call_response, create_session, new_runner, stored, turn


class Weather(BaseModel):
    city: str
    celsius: int


def lookup(city: str) -> str:
    """Looks the weather up."""
    return f"{city}: 3 degrees"


def test_without_tools_the_request_asks_for_json_of_the_schema() -> None:
    llm = ScriptedLlm(['{"city": "Oslo", "celsius": 3}'])
    runner = new_runner(LlmAgent(name="forecaster", model=llm, output_schema=Weather))
    create_session(runner)
    turn(runner, "weather in Oslo?")
    config = llm.requests[0].config
    assert config.response_mime_type == "application/json"
    assert config.response_json_schema == Weather.model_json_schema()
    assert llm.requests[0].function_declarations() == []


def test_output_key_stores_the_validated_json_value() -> None:
    llm = ScriptedLlm(['```json\n{"city": "Oslo", "celsius": "3"}\n```'])
    agent = LlmAgent(name="forecaster", model=llm, output_schema=Weather, output_key="weather")
    runner = new_runner(agent)
    create_session(runner)
    events = turn(runner, "weather in Oslo?")
    assert events[-1].actions.state_delta == {"weather": {"city": "Oslo", "celsius": 3}}
    assert stored(runner).state["weather"] == {"city": "Oslo", "celsius": 3}


def test_a_non_model_schema_is_validated_too() -> None:
    llm = ScriptedLlm(["[1, 2, 3]"])
    agent = LlmAgent(name="counter", model=llm, output_schema=list[int], output_key="numbers")
    runner = new_runner(agent)
    create_session(runner)
    turn(runner, "count")
    assert llm.requests[0].config.response_json_schema == {
        "items": {"type": "integer"},
        "type": "array",
    }
    assert stored(runner).state["numbers"] == [1, 2, 3]


def test_an_invalid_answer_is_sent_back_once_with_the_validation_error() -> None:
    llm = ScriptedLlm(['{"city": "Oslo"}', '{"city": "Oslo", "celsius": 4}'])
    agent = LlmAgent(name="forecaster", model=llm, output_schema=Weather, output_key="weather")
    runner = new_runner(agent)
    create_session(runner)
    events = turn(runner, "weather in Oslo?")
    assert simplify_events(events) == [
        'forecaster: {"city": "Oslo"}',
        'forecaster: {"city": "Oslo", "celsius": 4}',
    ]
    assert "celsius: Field required" in events[0].custom_metadata["adk_rx.output_schema_error"]
    assert events[0].actions.state_delta == {}
    repair = llm.requests[1].contents[-1]
    assert repair.role == "user"
    assert "celsius: Field required" in (repair.parts[0].text or "")
    assert stored(runner).state["weather"] == {"city": "Oslo", "celsius": 4}


def test_a_second_invalid_answer_errors_with_output_schema_error_and_is_stored() -> None:
    llm = ScriptedLlm(["sunny", "still sunny"])
    agent = LlmAgent(name="forecaster", model=llm, output_schema=Weather, output_key="weather")
    runner = new_runner(agent)
    create_session(runner)
    with pytest.raises(OutputSchemaError, match="after one repair round"):
        turn(runner, "weather?")
    assert len(llm.requests) == 2
    texts = [e.stringify_content() for e in stored(runner).events if e.author == "forecaster"]
    assert "sunny" in texts[0] and "still sunny" in texts[1]
    assert "weather" not in stored(runner).state


def test_the_repair_note_is_gone_in_the_next_turn() -> None:
    llm = ScriptedLlm(["bad", '{"city": "A", "celsius": 1}', '{"city": "B", "celsius": 2}'])
    runner = new_runner(LlmAgent(name="forecaster", model=llm, output_schema=Weather))
    create_session(runner)
    turn(runner, "first")
    turn(runner, "second")
    last = llm.requests[2].contents[-1]
    assert last.parts[0].text == "second"


def test_with_tools_the_agent_answers_through_set_model_response() -> None:
    llm = ScriptedLlm(
        [
            call_response("lookup", {"city": "Oslo"}),
            call_response("set_model_response", {"city": "Oslo", "celsius": 3}),
        ]
    )
    agent = LlmAgent(
        name="forecaster", model=llm, tools=[lookup], output_schema=Weather, output_key="weather"
    )
    runner = new_runner(agent)
    create_session(runner)
    events = turn(runner, "weather in Oslo?")
    assert llm.requests[0].config.response_mime_type is None
    declared = {d.name: d for d in llm.requests[0].function_declarations()}
    assert set(declared) == {"lookup", "set_model_response"}
    assert declared["set_model_response"].parameters_json_schema == Weather.model_json_schema()
    assert simplify_events(events)[-1] == 'forecaster: {"city": "Oslo", "celsius": 3}'
    assert events[-1].is_final_response()
    assert len(llm.requests) == 2  # the call ended the turn: no summarising model call
    assert stored(runner).state["weather"] == {"city": "Oslo", "celsius": 3}


def test_invalid_set_model_response_arguments_go_back_to_the_model() -> None:
    llm = ScriptedLlm(
        [
            call_response("set_model_response", {"city": "Oslo"}),
            call_response("set_model_response", {"city": "Oslo", "celsius": 5}),
        ]
    )
    agent = LlmAgent(
        name="forecaster", model=llm, tools=[lookup], output_schema=Weather, output_key="weather"
    )
    runner = new_runner(agent)
    create_session(runner)
    events = turn(runner, "weather?")
    first_response = events[1].get_function_responses()[0].response or {}
    assert "celsius" in first_response["error"]
    assert stored(runner).state["weather"] == {"city": "Oslo", "celsius": 5}
