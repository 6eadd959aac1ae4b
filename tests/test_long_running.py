"""Long-running tools through a Runner: pending answers, ending the turn, resuming it later."""

from __future__ import annotations

from typing import Any

from adk_rx import LlmAgent, LongRunningFunctionTool
from adk_rx.testing import ScriptedLlm, simplify_content, simplify_events
from tests.tool_harness import Harness, call, calls, user_response


class Approvals:
    """A long-running tool body that counts its runs and answers a fixed value."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.runs = 0

    def tool(self) -> LongRunningFunctionTool:
        def ask_for_approval(amount: int) -> Any:
            """Asks a manager to approve an amount."""
            self.runs += 1
            return self.answer

        return LongRunningFunctionTool(ask_for_approval)


def test_a_pending_result_is_answered_and_the_model_is_called_again() -> None:
    """Scenario 23."""
    approvals = Approvals({"status": "pending"})
    llm = ScriptedLlm([calls(call("ask_for_approval", {"amount": 5}, "lr-1")), "waiting"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[approvals.tool()]))

    events = harness.turn()

    assert simplify_events(events) == [
        'root: FunctionCall(ask_for_approval, {"amount": 5})',
        'root: FunctionResponse(ask_for_approval, {"status": "pending"})',
        "root: waiting",
    ]
    assert events[0].long_running_tool_ids == {"lr-1"}
    assert len(llm.requests) == 2


def test_a_none_result_ends_the_turn_after_one_model_call_without_a_response() -> None:
    """Scenario 62."""
    approvals = Approvals(None)
    llm = ScriptedLlm([calls(call("ask_for_approval", {"amount": 5}, "lr-1")), "unreachable"])
    agent = LlmAgent(name="root", model=llm, tools=[approvals.tool()], output_key="out")
    harness = Harness(agent)

    events = harness.turn()

    assert simplify_events(events) == ['root: FunctionCall(ask_for_approval, {"amount": 5})']
    assert events[0].is_final_response()
    assert approvals.runs == 1
    assert len(llm.requests) == 1
    assert "out" not in harness.session().state


def test_a_later_user_response_with_the_same_id_resumes_the_turn() -> None:
    approvals = Approvals(None)
    llm = ScriptedLlm([calls(call("ask_for_approval", {"amount": 5}, "lr-1")), "approved!"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[approvals.tool()]))
    harness.turn("please pay")

    events = harness.turn(user_response("lr-1", "ask_for_approval", {"status": "approved"}))

    assert simplify_events(events) == ["root: approved!"]
    assert [simplify_content(c) for c in llm.requests[-1].contents] == [
        "please pay",
        'FunctionCall(ask_for_approval, {"amount": 5})',
        'FunctionResponse(ask_for_approval, {"status": "approved"})',
    ]
    assert approvals.runs == 1


def test_multi_turn_lifecycle_runs_the_tool_once_and_answers_each_update() -> None:
    """Scenario 63."""
    approvals = Approvals({"status": "pending"})
    llm = ScriptedLlm(
        [
            calls(call("ask_for_approval", {"amount": 5}, "lr-1")),
            "response1",
            "response2",
            "response3",
            "response4",
        ]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[approvals.tool()]))

    first = harness.turn()
    assert simplify_events(first)[-1] == "root: response1"
    assert first[0].long_running_tool_ids == {"lr-1"}
    assert len(llm.requests) == 2

    for n, status in enumerate(["still waiting", "approved", "paid"], start=2):
        update = user_response("lr-1", "ask_for_approval", {"status": status})
        assert simplify_events(harness.turn(update)) == [f"root: response{n}"]
        assert len(llm.requests) == n + 1
        last = llm.requests[-1].contents[-1]
        assert simplify_content(last) == (
            f'FunctionResponse(ask_for_approval, {{"status": "{status}"}})'
        )

    assert approvals.runs == 1
