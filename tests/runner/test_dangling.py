"""Calls a crash left unanswered get ``{"error": "interrupted"}`` before any model sees them."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from adk_rx import Event, InMemoryRunner, LlmAgent, LongRunningFunctionTool, Runner
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from adk_rx.plugins import BasePlugin
from adk_rx.runner.dangling import dangling_calls, interrupted_answers
from adk_rx.sessions.session import Session
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.testing import ScriptedLlm, simplify_content, simplify_events
from adk_rx.tools import FunctionTool
from tests.models._fakes import FakeServer, json_reply, strict_history
from tests.tool_harness import SESSION, USER, Harness, call, calls, user_response

_SPAWN = multiprocessing.get_context("spawn")
_BOUND = 120.0  # upper bound for a child process; the test goes on as soon as it is done
_IN_TOOL: Any = None  # the child's "the tool is running" event


def slow_tool(city: str) -> dict[str, str]:
    """Looks a city up, slowly (until the test kills the process)."""
    _IN_TOOL.set()
    threading.Event().wait()
    return {"city": city}


class _CallStored(BasePlugin):
    """Tells the parent once the model's call is stored (the tool may start before that)."""

    def __init__(self, stored: Any) -> None:
        super().__init__(name="call_stored")
        self.stored = stored

    def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        if event.get_function_calls():
            self.stored.set()


def _call_event(call_id: str = "c1", *, author: str = "bot", **fields: Any) -> Event:
    return Event(
        author=author,
        invocation_id="e-crashed",
        content=types.Content(role="model", parts=[call("slow_tool", {"city": "Oslo"}, call_id)]),
        **fields,
    )


def _session_with(runner: InMemoryRunner, *events: Event) -> Session:
    svc = runner.session_service
    session = svc.create_session(app_name="app", user_id="u", session_id="s").run()
    for event in events:
        svc.append_event(session, event).run()
    return session


def _turn(runner: Runner, message: types.Content | str, session_id: str = "s") -> list[Event]:
    return list(runner.run(user_id="u", session_id=session_id, new_message=message))


def _stored(runner: Runner, session_id: str = "s", user_id: str = "u") -> list[Event]:
    session = runner.session_service.get_session(
        app_name="app", user_id=user_id, session_id=session_id
    ).run()
    assert session is not None
    return session.events


# -- in one process ------------------------------------------------------------------------


def test_an_unanswered_call_is_answered_interrupted_before_the_next_model_request() -> None:
    llm = ScriptedLlm(["fine again"])
    runner = InMemoryRunner(LlmAgent(name="bot", model=llm, tools=[slow_tool]), app_name="app")
    crashed = _call_event(branch=None)
    _session_with(
        runner,
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="Oslo?")])),
        crashed,
    )

    replies = _turn(runner, "after the crash")

    assert simplify_events(replies) == ["bot: fine again"]  # the answer is stored, not emitted
    assert [simplify_content(c) for c in llm.requests[0].contents] == [
        "Oslo?",
        'FunctionCall(slow_tool, {"city": "Oslo"})',
        'FunctionResponse(slow_tool, {"error": "interrupted"})',
        "after the crash",
    ]
    stored = _stored(runner)
    answer = stored[2]
    assert simplify_events([answer]) == [
        'bot: FunctionResponse(slow_tool, {"error": "interrupted"})'
    ]
    # Authored, branched and numbered as the tool's own response would have been.
    assert (answer.author, answer.branch, answer.invocation_id) == ("bot", None, "e-crashed")
    assert answer.get_function_responses()[0].id == "c1"
    assert stored[3].text() == "after the crash"


def test_the_answer_is_stored_once_and_later_turns_add_none() -> None:
    llm = ScriptedLlm(["one", "two"])
    runner = InMemoryRunner(LlmAgent(name="bot", model=llm), app_name="app")
    _session_with(runner, _call_event())

    _turn(runner, "first")
    _turn(runner, "second")

    interrupted = [e for e in _stored(runner) if e.get_function_responses()]
    assert len(interrupted) == 1


def test_calls_of_a_parallel_branch_are_answered_in_that_branch() -> None:
    llm = ScriptedLlm(["ok"])
    runner = InMemoryRunner(LlmAgent(name="bot", model=llm), app_name="app")
    _session_with(
        runner,
        _call_event("c1", author="left", branch="par.left"),
        _call_event("c2", author="right", branch="par.right"),
    )

    _turn(runner, "next")

    answers = [e for e in _stored(runner) if e.get_function_responses()]
    assert [(e.author, e.branch, e.get_function_responses()[0].id) for e in answers] == [
        ("left", "par.left", "c1"),
        ("right", "par.right", "c2"),
    ]


def test_a_pending_long_running_call_is_not_answered() -> None:
    def ask_for_approval(amount: int) -> None:
        """Asks a manager to approve an amount (answered later)."""

    llm = ScriptedLlm([calls(call("ask_for_approval", {"amount": 5}, "lr-1")), "noted", "done"])
    tool = LongRunningFunctionTool(ask_for_approval)
    harness = Harness(LlmAgent(name="root", model=llm, tools=[tool]))
    harness.turn("start")

    harness.turn("any news?")
    harness.turn(user_response("lr-1", "ask_for_approval", {"approved": True}))

    answers = [
        r.response
        for e in _stored(harness.runner, SESSION, USER)
        if e.author != "user"
        for r in e.get_function_responses()
    ]
    assert answers == []
    assert "interrupted" not in str([simplify_content(c) for c in llm.requests[-1].contents])


def test_a_call_waiting_for_confirmation_is_not_answered() -> None:
    def transfer(amount: int) -> dict[str, int]:
        """Moves money."""
        return {"moved": amount}

    llm = ScriptedLlm([calls(call("transfer", {"amount": 5}, "t-1")), "asked", "and now?"])
    tool = FunctionTool(transfer, require_confirmation=True)
    harness = Harness(LlmAgent(name="root", model=llm, tools=[tool]))
    harness.turn("pay")

    harness.turn("still there?")

    responses = [
        r.response
        for e in _stored(harness.runner, SESSION, USER)
        for r in e.get_function_responses()
    ]
    assert {"error": "interrupted"} not in responses


def test_a_call_the_new_message_answers_is_not_answered_interrupted() -> None:
    llm = ScriptedLlm(["thanks"])
    runner = InMemoryRunner(LlmAgent(name="bot", model=llm), app_name="app")
    _session_with(runner, _call_event("c1"))

    _turn(runner, user_response("c1", "slow_tool", {"city": "Oslo", "sky": "grey"}))

    assert [r.response for e in _stored(runner) for r in e.get_function_responses()] == [
        {"city": "Oslo", "sky": "grey"}
    ]


def test_a_call_in_the_users_own_message_is_not_answered() -> None:
    runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedLlm(["ok"])), app_name="app")
    session = _session_with(runner, _call_event("c1", author="user"))

    assert dangling_calls(session) == []


def test_dangling_calls_follow_a_growing_history() -> None:
    runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedLlm([])), app_name="app")
    session = _session_with(runner, _call_event("c1"))
    assert [d.call.id for d in dangling_calls(session)] == ["c1"]

    answers = interrupted_answers(dangling_calls(session))
    session.apply(answers[0])
    session.apply(_call_event("c2"))

    assert [d.call.id for d in dangling_calls(session)] == ["c2"]


# -- across a crash (kill -9), against a server that refuses unanswered calls -------------


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        yield request.getfixturevalue("fresh_postgres_url")


def _turn_killed_in_its_tool(url: str, session_id: str, in_tool: Any, stored: Any) -> None:
    global _IN_TOOL
    _IN_TOOL = in_tool
    svc = SqlSessionService(url)
    model = ScriptedLlm([calls(call("slow_tool", {"city": "Oslo"}, "call_1"))])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="bot", model=model, tools=[slow_tool]),
        session_service=svc,
        plugins=[_CallStored(stored)],
    )
    _turn(runner, "weather in Oslo?", session_id)


def test_after_a_process_is_killed_mid_tool_the_next_turn_reaches_a_strict_model(
    url: str, server: FakeServer
) -> None:
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    in_tool, stored = _SPAWN.Event(), _SPAWN.Event()
    child = _SPAWN.Process(target=_turn_killed_in_its_tool, args=(url, sid, in_tool, stored))
    child.start()
    try:
        assert in_tool.wait(_BOUND), "the child never reached its tool"
        assert stored.wait(_BOUND), "the child never stored the model's call"
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(_BOUND)
    finally:
        child.kill()
    server.push(
        strict_history(
            json_reply(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": "llama-test",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "fine again"},
                            "finish_reason": "stop",
                        }
                    ],
                }
            )
        )
    )
    model = OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", retry=None)
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="bot", model=model, tools=[slow_tool]),
        session_service=svc,
    )

    replies = _turn(runner, "after the crash", sid)

    assert [e.text() for e in replies] == ["fine again"]
    messages = [m for m in server.exchanges[0].json()["messages"] if m["role"] != "system"]
    assert [(m["role"], m.get("tool_call_id")) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "call_1"),
        ("user", None),
    ]
    assert '"interrupted"' in messages[2]["content"]
    assert simplify_events(_stored(runner, sid)) == [
        "user: weather in Oslo?",
        'bot: FunctionCall(slow_tool, {"city": "Oslo"})',
        'bot: FunctionResponse(slow_tool, {"error": "interrupted"})',
        "user: after the crash",
        "bot: fine again",
    ]
    svc.close()
