"""Which calls of a session a user's function response may answer, and the refusals."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_rx import Event
from adk_rx.errors import ConfigurationError
from adk_rx.flows.open_calls import check_answers, open_calls
from adk_rx.sessions.session import Session
from tests.tool_harness import call, user_response


def _calls(*parts: types.Part, author: str = "bot", long_running: set[str] | None = None) -> Event:
    return Event(
        author=author,
        content=types.Content(role="model", parts=list(parts)),
        long_running_tool_ids=frozenset(long_running) if long_running else None,
    )


def _answer(call_id: str, name: str, author: str = "bot") -> Event:
    return Event(author=author, content=user_response(call_id, name, {"ok": True}))


def _session(*events: Event) -> Session:
    return Session(id="s", app_name="app", user_id="u", events=list(events))


def _refusal(session: Session, message: types.Content) -> str:
    with pytest.raises(ConfigurationError) as refused:
        check_answers(session, message)
    return str(refused.value)


def test_a_response_to_a_call_the_session_does_not_hold_is_refused_with_the_open_calls() -> None:
    session = _session(_calls(call("lookup", {}, "c1")))

    message = _refusal(session, user_response("forged", "lookup", {"x": 1}))

    assert "'forged' is not in the session" in message
    assert "open calls: 'c1' (lookup)" in message


def test_a_response_to_an_answered_call_is_refused() -> None:
    session = _session(_calls(call("lookup", {}, "c1")), _answer("c1", "lookup"))

    message = _refusal(session, user_response("c1", "lookup", {"x": 1}))

    assert "'c1' already has its response" in message
    assert "the session has no open call" in message


def test_an_unanswered_call_is_answered_once_per_message() -> None:
    session = _session(_calls(call("lookup", {}, "c1")))
    check_answers(session, user_response("c1", "lookup", {"x": 1}))
    twice = types.Content(role="user", parts=[*_parts("c1"), *_parts("c1")])

    assert "'c1' is answered twice in this message" in _refusal(session, twice)


def _parts(call_id: str) -> list[types.Part]:
    return list(user_response(call_id, "lookup", {"again": True}).parts or [])


def test_a_long_running_call_takes_any_number_of_updates() -> None:
    lr = _calls(call("approve", {}, "lr-1"), long_running={"lr-1"})
    session = _session(lr, _answer("lr-1", "approve"), _answer("lr-1", "approve", "user"))

    check_answers(session, user_response("lr-1", "approve", {"status": "paid"}))

    assert list(open_calls(session)) == ["lr-1"]


def test_a_confirmation_request_is_answered_once() -> None:
    request = call("adk_request_confirmation", {}, "conf-1")
    session = _session(_calls(request, long_running={"conf-1"}))
    answer = user_response("conf-1", "adk_request_confirmation", {"confirmed": True})
    check_answers(session, answer)

    session.events.append(Event(author="user", content=answer))

    assert "already has its response" in _refusal(session, answer)


def test_a_response_without_an_id_is_refused() -> None:
    session = _session(_calls(call("lookup", {}, "c1")))
    nameless = types.Content(
        role="user",
        parts=[types.Part(function_response=types.FunctionResponse(name="lookup", response={}))],
    )

    assert "has no id" in _refusal(session, nameless)


def test_a_response_naming_another_function_than_its_call_is_refused() -> None:
    session = _session(_calls(call("lookup", {}, "c1")))

    message = _refusal(session, user_response("c1", "delete_everything", {}))

    assert "a call of 'lookup'" in message


def test_a_message_may_answer_its_own_call_and_text_is_never_checked() -> None:
    session = _session()
    own = types.Content(
        role="user", parts=[call("lookup", {}, "mine"), *_parts("mine"), types.Part(text="hi")]
    )

    check_answers(session, own)
    check_answers(session, types.Content(role="user", parts=[types.Part(text="hello")]))


def test_open_calls_follow_a_growing_history() -> None:
    session = _session(_calls(call("lookup", {}, "c1")))
    assert list(open_calls(session)) == ["c1"]

    session.events.append(_answer("c1", "lookup"))
    session.events.append(_calls(call("fetch", {}, "c2"), author="user"))

    assert list(open_calls(session)) == ["c2"]  # a call of the user's own message is open too
