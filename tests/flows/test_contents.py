"""Contents: model history as one agent in one branch sees it (scenarios 27 and 74)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_rx import Event, LlmAgent, Session
from adk_rx.flows.contents import build_contents
from adk_rx.testing import ScriptedLlm, simplify_content
from tests.spine_support import call_response, new_context, run_agent, text


def said(author: str, value: str, branch: str | None = None, **fields: Any) -> Event:
    role = "user" if author == "user" else "model"
    return Event(author=author, content=text(value, role), branch=branch, **fields)


def called(author: str, name: str, args: dict[str, Any], call_id: str) -> Event:
    call = types.FunctionCall(id=call_id, name=name, args=args)
    return Event(
        author=author, content=types.Content(role="model", parts=[types.Part(function_call=call)])
    )


def answered(author: str, name: str, response: dict[str, Any], call_id: str) -> Event:
    fr = types.FunctionResponse(id=call_id, name=name, response=response)
    return Event(
        author=author, content=types.Content(role="user", parts=[types.Part(function_response=fr)])
    )


def contents(
    events: list[Event], agent: str = "agent", branch: str | None = None, include: str = "default"
) -> list[str]:
    session = Session(id="s", app_name="app", user_id="u", events=events)
    return [simplify_content(c) for c in build_contents(session, agent, branch, include)]


def test_user_and_own_events_are_kept_as_they_are() -> None:
    events = [said("user", "hi"), said("agent", "hello")]
    session = Session(id="s", app_name="app", user_id="u", events=events)
    built = build_contents(session, "agent", None)
    assert [c.role for c in built] == ["user", "model"]
    assert built[1] is events[1].content


def test_other_agents_turns_become_for_context_user_messages() -> None:
    events = [
        said("user", "hi"),
        said("other_agent", "Some text"),
        called("other_agent", "tool1", {"arg1": "value", "arg2": [1, 2]}, "c1"),
    ]
    session = Session(id="s", app_name="app", user_id="u", events=events)
    built = build_contents(session, "agent", None)
    assert [c.role for c in built] == ["user", "user", "user"]
    assert [p.text for p in built[1].parts or []] == [
        "For context:",
        "[other_agent] said: Some text",
    ]
    assert [p.text for p in built[2].parts or []] == [
        "For context:",
        '[other_agent] called tool `tool1` with parameters: {"arg1": "value", "arg2": [1, 2]}',
    ]


def test_partial_empty_and_confirmation_events_are_left_out() -> None:
    events = [
        said("user", "hi"),
        said("agent", "chunk", partial=True),
        Event(author="agent"),
        called("agent", "adk_request_confirmation", {"x": 1}, "conf"),
        said("agent", "done"),
    ]
    assert contents(events) == ["hi", "done"]


def test_include_contents_none_keeps_only_the_current_user_turn() -> None:
    events = [said("user", "old"), said("agent", "old reply"), said("user", "new")]
    assert contents(events, include="none") == ["new"]


def test_include_contents_none_keeps_the_last_foreign_turn_rewritten() -> None:
    events = [said("user", "old"), said("agent", "reply"), said("other", "handover")]
    assert contents(events, include="none") == ["[For context:, [other] said: handover]"]


def test_include_contents_none_keeps_the_call_a_user_answer_to_a_long_running_call_answers():
    events = [
        said("user", "old"),
        said("user", "approve 5"),
        called("agent", "ask_approval", {"amount": 5}, "lr-1"),
        answered("user", "ask_approval", {"approved": True}, "lr-1"),
    ]
    assert contents(events, include="none") == [
        "approve 5",
        'FunctionCall(ask_approval, {"amount": 5})',
        'FunctionResponse(ask_approval, {"approved": true})',
    ]


def test_sibling_branch_with_a_shared_name_prefix_is_not_visible() -> None:
    events = [
        said("user", "hi"),
        said("agent", "parent", branch="root"),
        said("agent", "sibling", branch="root.agent_1"),
        said("agent", "mine", branch="root.agent_10"),
    ]
    assert contents(events, branch="root.agent_10") == ["hi", "parent", "mine"]


def test_late_function_response_is_moved_next_to_its_call() -> None:
    events = [
        said("user", "u1"),
        called("agent", "slow", {}, "c1"),
        said("user", "u2"),
        answered("agent", "slow", {"done": True}, "c1"),
    ]
    assert contents(events) == [
        "u1",
        "FunctionCall(slow, {})",
        'FunctionResponse(slow, {"done": true})',
    ]


def test_later_model_step_sees_earlier_steps_of_the_same_invocation() -> None:
    """Scenario 27: each step's events are applied before the next step is built."""

    def lookup(key: str) -> str:
        """Looks a key up.

        Args:
            key: what to look up.
        """
        return f"value of {key}"

    llm = ScriptedLlm([call_response("lookup", {"key": "k"}), "final"])
    agent = LlmAgent(name="agent", model=llm, tools=[lookup])
    run_agent(agent, new_context(agent))
    assert [simplify_content(c) for c in llm.requests[1].contents] == [
        'FunctionCall(lookup, {"key": "k"})',
        'FunctionResponse(lookup, {"result": "value of k"})',
    ]
