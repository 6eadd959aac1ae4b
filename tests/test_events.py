"""Events and EventActions: final-response rules, merge, immutability, JSON (scenario 75)."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest
from google.genai import types

from adk_rx import ConfigurationError, Event, EventActions


def call_part(name: str = "tool", call_id: str = "c1") -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={"a": 1}))


def response_part(name: str = "tool", call_id: str = "c1") -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response={"ok": True})
    )


def event(*parts: types.Part, **fields: object) -> Event:
    return Event(author="agent", content=types.Content(role="model", parts=list(parts)), **fields)


# -- is_final_response ----------------------------------------------------------------------


def test_text_event_is_a_final_response() -> None:
    assert event(types.Part(text="done")).is_final_response()


def test_event_without_content_is_a_final_response() -> None:
    assert Event(author="agent").is_final_response()


def test_function_call_event_is_not_final() -> None:
    assert not event(types.Part(text="calling"), call_part()).is_final_response()


def test_function_response_event_is_not_final() -> None:
    assert not event(response_part()).is_final_response()


def test_partial_event_is_not_final() -> None:
    assert not event(types.Part(text="chunk"), partial=True).is_final_response()


def test_call_with_long_running_tool_id_is_final() -> None:
    e = event(call_part(call_id="lr"), long_running_tool_ids=frozenset({"lr"}))
    assert e.is_final_response()
    assert e.has_pending_long_running_tool_call()


def test_skip_summarization_makes_a_response_event_final() -> None:
    e = event(response_part(), actions=EventActions(skip_summarization=True))
    assert e.is_final_response()


def test_trailing_code_execution_result_is_not_final() -> None:
    result = types.Part(
        code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="4")
    )
    assert not event(types.Part(text="ran"), result).is_final_response()


# -- content helpers --------------------------------------------------------------------------


def test_function_calls_and_responses_are_returned_in_order() -> None:
    e = event(call_part("a", "1"), types.Part(text="x"), call_part("b", "2"), response_part("c"))
    assert [c.name for c in e.get_function_calls()] == ["a", "b"]
    assert [r.name for r in e.get_function_responses()] == ["c"]
    assert Event(author="a").get_function_calls() == []


def test_stringify_content_gives_text_or_json_of_the_content() -> None:
    assert event(types.Part(text="Hel"), types.Part(text="lo")).stringify_content() == "Hello"
    assert (
        json.loads(event(call_part()).stringify_content())["parts"][0]["functionCall"]["name"]
        == "tool"
    )
    assert Event(author="a").stringify_content() == ""


# -- immutability and JSON ------------------------------------------------------------------


def test_assigning_an_event_or_actions_field_raises() -> None:
    e = event(types.Part(text="x"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.author = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.actions.escalate = True  # type: ignore[misc]


def test_event_ids_are_unique_uuid_hex_and_timestamps_are_float_seconds() -> None:
    a, b = Event(author="x"), Event(author="x")
    assert a.id != b.id
    assert len(a.id) == 32 and int(a.id, 16) >= 0
    assert isinstance(a.timestamp, float) and a.timestamp > 1.6e9


def test_json_round_trip_keeps_every_field() -> None:
    original = event(
        types.Part(text="hi"),
        call_part(),
        invocation_id="e-1",
        branch="a.b",
        partial=False,
        turn_complete=True,
        error_code="SAFETY",
        long_running_tool_ids=frozenset({"c1"}),
        custom_metadata={"k": [1, 2]},
        actions=EventActions(
            state_delta={"k": {"n": 1}},
            artifact_delta={"f.txt": 2},
            transfer_to_agent="other",
            escalate=True,
            end_of_agent=True,
        ),
    )
    data = json.loads(original.to_json())
    assert data["invocationId"] == "e-1"
    assert data["actions"]["stateDelta"] == {"k": {"n": 1}}
    assert Event.from_json(original.to_json()) == original


def test_from_json_accepts_snake_case_keys() -> None:
    parsed = Event.from_json('{"author": "a", "invocation_id": "e-9", "turn_complete": true}')
    assert (parsed.invocation_id, parsed.turn_complete) == ("e-9", True)


# -- construction ----------------------------------------------------------------------------


def test_the_constructor_stores_every_field_given_by_name_or_position() -> None:
    names = [f.name for f in dataclasses.fields(Event)]
    assert list(inspect.signature(Event.__init__).parameters)[1:] == names
    values = {name: object() for name in names}
    for made in (Event(**values), Event(*values.values())):  # pyright: ignore[reportArgumentType]
        assert type(made) is Event
        assert all(getattr(made, name) is value for name, value in values.items())
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.author = "someone else"  # pyright: ignore[reportAttributeAccessIssue]


def test_an_id_or_a_timestamp_of_none_is_drawn_fresh() -> None:
    made = Event(author="agent", id=None, timestamp=None)
    assert isinstance(made.id, str) and len(made.id) == 32
    assert isinstance(made.timestamp, float) and made.timestamp > 0


def test_a_subclass_with_slots_of_its_own_is_built_by_the_same_constructor() -> None:
    class Tagged(Event):
        __slots__ = ("tag",)

    made = Tagged(author="agent", content=types.Content(role="model", parts=[]))
    assert type(made) is Tagged and made.author == "agent" and len(made.id) == 32
    assert made == Event(author="agent", content=made.content, id=made.id, timestamp=made.timestamp)


# -- EventActions.merge -----------------------------------------------------------------------


def test_merge_deep_merges_state_deltas() -> None:
    left = EventActions(state_delta={"a": 1, "b": {"nested1": 10, "nested2": 20}, "c": 100})
    right = EventActions(state_delta={"a": 2, "b": {"nested2": 22, "nested3": 30}, "d": 200})
    merged = left.merge(right)
    assert dict(merged.state_delta) == {
        "a": 2,
        "b": {"nested1": 10, "nested2": 22, "nested3": 30},
        "c": 100,
        "d": 200,
    }
    assert dict(left.state_delta)["b"] == {"nested1": 10, "nested2": 20}


def test_merge_fails_when_nested_key_types_differ() -> None:
    left = EventActions(state_delta={"b": {"x": 1}})
    right = EventActions(state_delta={"b": {1: 2}})
    with pytest.raises(ConfigurationError, match="key types differ"):
        left.merge(right)


def test_merge_last_scalar_wins_and_flags_are_ored() -> None:
    left = EventActions(transfer_to_agent="a", end_of_agent=True, artifact_delta={"f": 1})
    right = EventActions(transfer_to_agent="b", escalate=True, artifact_delta={"g": 0})
    merged = left.merge(right)
    assert merged.transfer_to_agent == "b"
    assert (merged.end_of_agent, merged.escalate) == (True, True)
    assert dict(merged.artifact_delta) == {"f": 1, "g": 0}
    assert EventActions().merge(left) == left


def test_client_side_call_ids_have_one_format() -> None:
    import re

    from adk_rx.events import new_call_id

    ids = {new_call_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(re.fullmatch(r"adk-[0-9a-f]{32}", i) for i in ids)
