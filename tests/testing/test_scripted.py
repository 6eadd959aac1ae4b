"""ScriptedLlm and simplify_events: the testing kit behaves as the contract says."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_rx import Event, LlmRequest, LlmResponse, ModelError
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import is_sync
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import collect, text


def request(value: str = "hi") -> LlmRequest:
    return LlmRequest(model="scripted", contents=[text(value)])


def texts(responses: list[LlmResponse]) -> list[tuple[str, bool | None]]:
    return [(r.get_text(), r.partial) for r in responses]


def test_each_call_takes_the_next_item() -> None:
    llm = ScriptedLlm(["one", LlmResponse.text("two")])
    assert texts(collect(llm.generate_content(request()))) == [("one", None)]
    assert texts(collect(llm.generate_content(request()))) == [("two", None)]


def test_text_item_is_a_model_reply() -> None:
    (response,) = collect(ScriptedLlm(["hello"]).generate_content(request()))
    assert response.content is not None and response.content.role == "model"


def test_list_item_is_one_streamed_call_with_partials_then_the_aggregate() -> None:
    llm = ScriptedLlm([["Hel", "lo"]])
    assert texts(collect(llm.generate_content(request(), stream=True))) == [
        ("Hel", True),
        ("lo", True),
        ("Hello", None),
    ]


def test_list_item_with_its_own_final_response_is_emitted_as_given() -> None:
    chunks = [LlmResponse.text("a", partial=True), LlmResponse.text("final")]
    assert texts(collect(ScriptedLlm([chunks]).generate_content(request()))) == [
        ("a", True),
        ("final", None),
    ]


def test_exception_item_errors_the_call() -> None:
    llm = ScriptedLlm([ValueError("boom"), "after"])
    with pytest.raises(ValueError, match="boom"):
        collect(llm.generate_content(request()))
    assert texts(collect(llm.generate_content(request()))) == [("after", None)]


def test_callable_item_gets_the_request_and_returns_an_item() -> None:
    llm = ScriptedLlm([lambda req: f"echo {req.contents[0].parts[0].text}"])
    assert texts(collect(llm.generate_content(request("ping")))) == [("echo ping", None)]


def test_running_out_of_items_errors_the_call_with_model_error() -> None:
    llm = ScriptedLlm(["only"])
    collect(llm.generate_content(request()))
    with pytest.raises(ModelError, match="ran out"):
        collect(llm.generate_content(request()))


def test_requests_are_recorded_in_order_at_subscription() -> None:
    llm = ScriptedLlm(["a", "b"])
    first, second = request("1"), request("2")
    pending = llm.generate_content(first)
    assert llm.requests == []
    collect(pending)
    collect(llm.generate_content(second))
    assert llm.requests == [first, second]
    assert llm.remaining == 0


def test_plain_items_are_answered_while_subscribed_and_errors_are_not() -> None:
    llm = ScriptedLlm(["a", ValueError("down"), "c"])
    answered = settle(llm.generate_content(request("1")))
    assert is_sync(answered) and [r.get_text() for r in answered.items_now()] == ["a"]
    failed = settle(llm.generate_content(request("2")))
    assert not is_sync(failed)  # an error is continued by the Rx path, not answered now
    with pytest.raises(ValueError, match="down"):
        collect(failed)
    assert llm.remaining == 1
    assert [r.contents[-1].parts[0].text for r in llm.requests] == ["1", "2"]  # type: ignore[index]


def test_requests_are_not_kept_when_asked_not_to() -> None:
    llm = ScriptedLlm(["a", "b"], keep_requests=False)
    collect(llm.generate_content(request()))
    collect(llm.generate_content(request()))
    assert llm.requests == []
    assert llm.remaining == 0


def test_unsupported_script_item_is_rejected_up_front() -> None:
    with pytest.raises(TypeError, match="unsupported script item"):
        ScriptedLlm([42])


# -- simplify_events ----------------------------------------------------------------------------


def test_simplify_events_formats_text_calls_responses_and_empty_events() -> None:
    call = types.Part(function_call=types.FunctionCall(name="get", args={"city": "Oslo"}))
    resp = types.Part(function_response=types.FunctionResponse(name="get", response={"temp": 3}))
    events = [
        Event(author="user", content=text("hi")),
        Event(author="agent", content=types.Content(role="model", parts=[call])),
        Event(author="agent", content=types.Content(role="user", parts=[resp])),
        Event(
            author="agent",
            content=types.Content(role="model", parts=[types.Part(text="a"), types.Part(text="b")]),
        ),
        Event(author="agent"),
        Event(author="agent", error_code="CANCELLED"),
    ]
    assert simplify_events(events) == [
        "user: hi",
        'agent: FunctionCall(get, {"city": "Oslo"})',
        'agent: FunctionResponse(get, {"temp": 3})',
        "agent: [a, b]",
        "agent: [NO_CONTENT]",
        "agent: [CANCELLED]",
    ]


def test_simplify_events_leaves_out_thought_parts() -> None:
    content = types.Content(
        role="model", parts=[types.Part(text="hmm", thought=True), types.Part(text="answer")]
    )
    assert simplify_events([Event(author="agent", content=content)]) == ["agent: answer"]
