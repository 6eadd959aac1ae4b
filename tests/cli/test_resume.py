"""What a resumed session waits for, and how the chat's answers become FunctionResponses."""

from __future__ import annotations

from google.genai import types

from adk_rx import Event
from adk_rx.cli.resume import answer_part, describe_pending, history_lines, pending_calls
from adk_rx.sessions.session import Session


def _calls(author: str, *calls: types.FunctionCall, waiting: frozenset[str] = frozenset()) -> Event:
    parts = [types.Part(function_call=c) for c in calls]
    return Event(
        author=author,
        content=types.Content(role="model", parts=parts),
        long_running_tool_ids=waiting,
    )


def _response(call_id: str, name: str) -> Event:
    part = types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response={"ok": 1})
    )
    return Event(author="user", content=types.Content(role="user", parts=[part]))


DEPLOY = types.FunctionCall(id="c1", name="start_deploy", args={"env": "prod"})
LOOKUP = types.FunctionCall(id="c2", name="lookup", args={})
CONFIRM = types.FunctionCall(
    id="c3",
    name="adk_request_confirmation",
    args={
        "originalFunctionCall": {"id": "c0", "name": "refund", "args": {"amount": 5}},
        "toolConfirmation": {"hint": "Refund 5 EUR?"},
    },
)


def test_pending_calls_are_unanswered_confirmations_and_long_running_calls() -> None:
    events = [
        _calls("a", DEPLOY, LOOKUP, waiting=frozenset({"c1"})),
        _calls("a", CONFIRM, waiting=frozenset({"c3"})),
    ]
    assert [c.id for c in pending_calls(events)] == ["c1", "c3"]  # lookup is no long-running
    assert pending_calls([*events, _response("c1", "start_deploy")]) == [CONFIRM]


def test_a_confirmation_answer_is_confirmed_only_for_yes() -> None:
    yes, no = answer_part(CONFIRM, "Y"), answer_part(CONFIRM, "")
    assert yes is not None and no is not None
    assert yes.function_response == types.FunctionResponse(
        id="c3", name="adk_request_confirmation", response={"confirmed": True}
    )
    assert no.function_response is not None
    assert no.function_response.response == {"confirmed": False}
    assert "Refund 5 EUR?" in describe_pending(CONFIRM)
    assert describe_pending(CONFIRM).endswith("approve refund?")


def test_a_long_running_answer_takes_json_or_text_and_empty_skips() -> None:
    as_json, as_text = answer_part(DEPLOY, '{"status": "done"}'), answer_part(DEPLOY, "done")
    assert as_json is not None and as_json.function_response is not None
    assert as_json.function_response.response == {"status": "done"}
    assert as_text is not None and as_text.function_response is not None
    assert as_text.function_response.response == {"result": "done"}
    assert answer_part(DEPLOY, "  ") is None
    assert describe_pending(DEPLOY) == 'start_deploy({"env": "prod"}) waits for its result'


def test_history_counts_events_and_shows_the_last_turns() -> None:
    def said(author: str, text: str) -> Event:
        role = "user" if author == "user" else "model"
        return Event(author=author, content=types.Content(role=role, parts=[types.Part(text=text)]))

    session = Session(
        id="s",
        app_name="app",
        user_id="u",
        events=[said("user", "one"), said("a", "re one"), said("user", "two"), said("a", "re two")],
    )
    assert history_lines(session, turns=1) == [
        "resumed session s: 4 events",
        "last 1 turn(s):",
        "  you: two",
        "  a: re two",
    ]
