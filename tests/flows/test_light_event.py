"""A streamed chunk's light event reads, compares, serialises and copies as a full Event."""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import pickle
import threading

import pytest
from google.genai import types

from adk_rx import Event, EventActions, LlmAgent, RunConfig, StreamingMode
from adk_rx.flows.light_event import CHUNK_EVENT, RUN_AT_MOST, CallChunks, chunk_event
from adk_rx.flows.model_event import ResponseIds, model_event
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.agents.scripted_agents import invocation_context
from tests.spine_support import USER, create_session, new_runner, turn

AGENT = LlmAgent(name="helper", model=ScriptedLlm([]))
FIELDS = [f.name for f in dataclasses.fields(Event)]


def chunk(text: str = "Hel", **fields: object) -> LlmResponse:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return LlmResponse(content=content, partial=True, **fields)  # type: ignore[arg-type]


def full_twin(event: Event) -> Event:
    """The Event built field by field, as model_event built every chunk's event before."""
    return Event(**{name: getattr(event, name) for name in FIELDS})


RICH = chunk(
    "Hel",
    finish_reason="STOP",
    usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=3),
    custom_metadata={"k": [1, 2]},
    model_version="m-1",
    avg_logprobs=-0.5,
    turn_complete=False,
)


@pytest.mark.parametrize("response", [chunk(), RICH], ids=["plain", "with metadata"])
def test_a_chunk_event_is_an_event_with_every_field_of_its_response(
    response: LlmResponse,
) -> None:
    ctx = invocation_context(AGENT)
    actions = EventActions(state_delta={"seen": 1})
    event = chunk_event(
        response,
        response.content,  # type: ignore[arg-type]
        id="abc",
        author="helper",
        invocation_id="e-1",
        branch="root.helper",
        actions=actions,
    )
    assert isinstance(event, Event)
    assert type(event) is not Event  # the light class
    expected = Event(
        id="abc",
        author="helper",
        invocation_id="e-1",
        branch="root.helper",
        content=response.content,
        actions=actions,
        partial=True,
        timestamp=event.timestamp,
        turn_complete=response.turn_complete,
        finish_reason=response.finish_reason,
        usage_metadata=response.usage_metadata,
        custom_metadata=response.custom_metadata,
        model_version=response.model_version,
        avg_logprobs=response.avg_logprobs,
    )
    assert {n: getattr(event, n) for n in FIELDS} == {n: getattr(expected, n) for n in FIELDS}
    assert event == expected and expected == event
    assert event != expected.replace(id="other") and expected.replace(id="other") != event
    assert event.to_json() == expected.to_json()
    assert event.to_dict() == expected.to_dict()
    assert Event.from_json(event.to_json()) == event
    assert repr(event) == repr(expected)
    assert not event.is_final_response() and event.text() == "Hel"
    assert ctx.invocation_id  # the context is only used to make one


def test_a_chunk_event_is_frozen_and_copies_as_a_plain_event() -> None:
    ctx = invocation_context(AGENT)
    event = model_event(chunk(), author="helper", ctx=ctx, partial=True, ids=ResponseIds())
    assert event is not None and type(event) is not Event
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.author = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.finish_reason = "STOP"  # type: ignore[misc]
    changed = event.replace(finish_reason="STOP")
    assert type(changed) is Event and changed.finish_reason == "STOP"
    assert changed.replace(finish_reason=None) == event
    assert type(dataclasses.replace(event, partial=False)) is Event
    for copied in (copy.copy(event), copy.deepcopy(event), pickle.loads(pickle.dumps(event))):
        assert type(copied) is Event and copied == event
    assert dataclasses.asdict(event) == dataclasses.asdict(full_twin(event))


def test_a_chunk_with_function_calls_keeps_the_full_event() -> None:
    ctx = invocation_context(AGENT)
    call = types.Part(function_call=types.FunctionCall(name="lookup", args={}))
    response = LlmResponse(content=types.Content(role="model", parts=[call]), partial=True)
    event = model_event(response, author="helper", ctx=ctx, partial=True)
    assert event is not None and type(event) is Event
    assert (event.get_function_calls()[0].id or "").startswith("adk-")


def test_streamed_events_of_a_run_are_light_and_read_as_before() -> None:
    """Through a Runner in SSE mode: every chunk's event has the run's invocation fields."""
    stream = [chunk("a"), chunk("b"), LlmResponse.text("ab", turn_complete=True)]
    runner = new_runner(LlmAgent(name="helper", model=ScriptedLlm([stream])))
    create_session(runner)
    events = turn(runner, "hi", run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    partial = [e for e in events if e.partial]
    final = events[-1]
    assert [e.text() for e in partial] == ["a", "b"] and final.text() == "ab"
    for event in partial:
        assert type(event) is not Event
        assert (event.author, event.invocation_id, event.branch, event.id) == (
            final.author,
            final.invocation_id,
            final.branch,
            final.id,
        )
        assert json.loads(event.to_json())["partial"] is True


def test_a_run_of_chunks_is_made_in_one_call_and_stops_at_the_first_other_response() -> None:
    call = types.FunctionCall(name="f", args={})
    calling = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]), partial=True
    )
    responses = [chunk("a"), chunk("b"), calling, chunk("c"), LlmResponse.text("abc")]
    ids = ResponseIds()
    chunks = CallChunks(ids, "helper", "e-1", None, EventActions())

    first, stop = chunks.run_of(responses, 0)
    assert stop == 2
    assert [e.text() for e in first] == ["a", "b"]
    assert all(e.id == ids.value and e.partial for e in first)
    assert chunks.run_of(responses, 2) == ((), 2)  # a call is no plain chunk
    rest, stop = chunks.run_of(responses, 3)
    one = chunks.of(chunk("c"))
    assert stop == 4 and len(rest) == 1 and one is not None
    assert full_twin(rest[0]) == dataclasses.replace(full_twin(one), timestamp=rest[0].timestamp)


def test_a_run_of_chunks_stops_after_run_at_most_of_them() -> None:
    responses = [chunk(str(n)) for n in range(RUN_AT_MOST + 3)]
    chunks = CallChunks(ResponseIds(), "helper", "e-1", None, EventActions())
    first, stop = chunks.run_of(responses, 0)
    rest, end = chunks.run_of(responses, stop)
    assert (len(first), stop, len(rest), end) == (RUN_AT_MOST, RUN_AT_MOST, 3, RUN_AT_MOST + 3)
    assert [e.text() for e in first + rest] == [str(n) for n in range(RUN_AT_MOST + 3)]


def test_a_long_streams_chunks_are_emitted_in_order_and_released_as_they_go() -> None:
    """The subscriber keeps no event: when the last chunk is emitted, the events of the
    earlier runs of chunks are gone (all of them would be alive if the step made them all
    before emitting the first)."""
    count = 3 * RUN_AT_MOST + 5
    stream = [chunk(f"c{n}") for n in range(count)]
    stream.append(LlmResponse.text("".join(f"c{n}" for n in range(count)), turn_complete=True))
    runner = new_runner(LlmAgent(name="helper", model=ScriptedLlm([stream])))
    create_session(runner)
    texts: list[str] = []
    ids: set[str] = set()
    alive_at_last: list[int] = []
    done = threading.Event()

    def seen(event: Event) -> None:
        texts.append(event.text())
        ids.add(event.id)
        if len(texts) == count:  # the last chunk
            alive_at_last.append(sum(type(o) is CHUNK_EVENT for o in gc.get_objects()))

    runner.run_async(
        user_id=USER,
        session_id="s1",
        new_message="hi",
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    ).subscribe(seen, on_completed=done.set)
    assert done.wait(10)
    assert texts == [f"c{n}" for n in range(count)] + ["".join(texts[:count])]
    assert len(ids) == 1  # the chunks share the complete response's id
    assert 0 < alive_at_last[0] <= RUN_AT_MOST


JSON_CHUNKS = {
    "text": (chunk("Hel"), "helper", None, EventActions()),
    "quoted unicode": (chunk('sé "q" \\n'), 'a "b" é', "root.é", EventActions()),
    "bytes and thought": (
        LlmResponse(
            content=types.Content(
                role="model",
                parts=[
                    types.Part(inline_data=types.Blob(mime_type="audio/pcm", data=b"\x00\xff")),
                    types.Part(text="hm", thought=True),
                ],
            ),
            partial=True,
        ),
        "helper",
        "root",
        EventActions(state_delta={"k": [1, "é"]}),
    ),
    "with metadata": (RICH, "helper", None, EventActions()),
}


@pytest.mark.parametrize("name", sorted(JSON_CHUNKS))
def test_a_chunk_event_serialises_as_the_event_with_its_fields(name: str) -> None:
    response, author, branch, actions = JSON_CHUNKS[name]
    chunks = CallChunks(ResponseIds(), author, "e-1", branch, actions)
    event = chunks.of(response)
    assert event is not None
    for _ in range(2):  # the shared part is made once, then reused
        assert event.to_json() == full_twin(event).to_json()
    assert Event.from_json(event.to_json()) == event
