"""Tool confirmation: adk_request_confirmation, then resumption on the next turn."""

from __future__ import annotations

from typing import Any

from adk_rx import FunctionTool, LlmAgent, SequentialAgent, ToolContext
from adk_rx.testing import ScriptedLlm, simplify_content, simplify_events
from adk_rx.tools.function import REJECTED, REQUIRES_CONFIRMATION
from tests.tool_harness import Harness, call, calls, user_response

ran: list[str] = []


def echo_tool(message: str) -> dict[str, Any]:
    """Echoes the message."""
    ran.append(message)
    return {"message": message}


def confirmed_echo() -> FunctionTool:
    return FunctionTool(echo_tool, require_confirmation=True)


def _confirmation_call_id(events: list[Any]) -> str:
    found = [
        c.id for e in events for c in e.get_function_calls() if c.name == "adk_request_confirmation"
    ]
    assert len(found) == 1 and found[0]
    return found[0]


def test_a_tool_needing_confirmation_asks_then_runs_once_confirmed() -> None:
    """Scenario 60."""
    ran.clear()
    llm = ScriptedLlm(
        [
            calls(call("echo_tool", {"message": "hello"}, "tool_call_id")),
            "Response after observing tool needs confirmation.",
            "Response after user confirmed.",
        ]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[confirmed_echo()]))

    first = harness.turn("from user")

    assert simplify_events(first)[0] == 'root: FunctionCall(echo_tool, {"message": "hello"})'
    request = first[1].get_function_calls()[0]
    assert request.name == "adk_request_confirmation"
    assert request.args is not None
    assert request.args["originalFunctionCall"] == {
        "id": "tool_call_id",
        "name": "echo_tool",
        "args": {"message": "hello"},
    }
    assert request.args["toolConfirmation"]["confirmed"] is False
    assert "echo_tool" in request.args["toolConfirmation"]["hint"]
    assert first[1].long_running_tool_ids == {request.id}
    assert simplify_events(first[2:]) == [
        f'root: FunctionResponse(echo_tool, {{"error": "{REQUIRES_CONFIRMATION}"}})',
        "root: Response after observing tool needs confirmation.",
    ]
    assert ran == []

    answer = user_response(
        _confirmation_call_id(first), "adk_request_confirmation", {"confirmed": True}
    )
    second = harness.turn(answer)

    assert simplify_events(second) == [
        'root: FunctionResponse(echo_tool, {"message": "hello"})',
        "root: Response after user confirmed.",
    ]
    assert second[0].get_function_responses()[0].id == "tool_call_id"
    assert ran == ["hello"]
    assert len(llm.requests) == 3
    assert [simplify_content(c) for c in llm.requests[-1].contents] == [
        "from user",
        'FunctionCall(echo_tool, {"message": "hello"})',
        'FunctionResponse(echo_tool, {"message": "hello"})',
    ]


def test_a_rejected_confirmation_answers_the_call_with_a_rejection() -> None:
    ran.clear()
    llm = ScriptedLlm([calls(call("echo_tool", {"message": "hello"}, "c1")), "asked", "understood"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[confirmed_echo()]))
    first = harness.turn()

    second = harness.turn(
        user_response(
            _confirmation_call_id(first),
            "adk_request_confirmation",
            {"response": '{"confirmed": false}'},
        )
    )

    assert simplify_events(second) == [
        f'root: FunctionResponse(echo_tool, {{"error": "{REJECTED}"}})',
        "root: understood",
    ]
    assert ran == []


def test_confirmation_inside_a_sequential_sub_agent_resumes_that_sub_agent() -> None:
    """Scenario 61."""
    ran.clear()
    llm = ScriptedLlm(
        [
            calls(call("transfer_to_agent", {"agent_name": "workflow"})),
            calls(call("echo_tool", {"message": "hello"}, "tool_call_id")),
            "Response after observing tool needs confirmation.",
            "Response after user confirmed.",
        ]
    )
    child = LlmAgent(name="child_agent", tools=[confirmed_echo()])
    workflow = SequentialAgent(name="workflow", sub_agents=[child])
    harness = Harness(LlmAgent(name="root_agent", model=llm, sub_agents=[workflow]))

    first = harness.turn()
    second = harness.turn(
        user_response(_confirmation_call_id(first), "adk_request_confirmation", {"confirmed": True})
    )

    assert simplify_events(second) == [
        'child_agent: FunctionResponse(echo_tool, {"message": "hello"})',
        "child_agent: Response after user confirmed.",
    ]
    assert ran == ["hello"]


def test_any_tool_may_request_confirmation_through_its_context() -> None:
    seen: list[Any] = []

    def transfer_money(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Moves money once approved."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint="approve?", payload={"limit": 100})
            return {"status": "waiting for approval"}
        seen.append(confirmation.payload)
        return {"moved": amount if confirmation.confirmed else 0}

    llm = ScriptedLlm([calls(call("transfer_money", {"amount": 5}, "m1")), "asked", "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[transfer_money]))
    first = harness.turn()
    args = first[1].get_function_calls()[0].args or {}
    assert args["toolConfirmation"] == {
        "hint": "approve?",
        "confirmed": False,
        "payload": {"limit": 100},
    }

    second = harness.turn(
        user_response(
            _confirmation_call_id(first),
            "adk_request_confirmation",
            {"confirmed": True, "payload": {"limit": 10}},
        )
    )

    assert second[0].get_function_responses()[0].response == {"moved": 5}
    assert seen == [{"limit": 10}]
