"""Agent transfer through a Runner: re-rooting within a turn, routing of the next turn."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import (
    AgentNotFoundError,
    CallbackContext,
    LlmAgent,
    LoopAgent,
    SequentialAgent,
    ToolContext,
)
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import Harness, call, calls


def transfer(name: str) -> Any:
    return calls(call("transfer_to_agent", {"agent_name": name}))


TRANSFER_1 = [
    'root_agent: FunctionCall(transfer_to_agent, {"agent_name": "sub_agent_1"})',
    "root_agent: FunctionResponse(transfer_to_agent, {})",
]


def single(name: str, **kwargs: Any) -> LlmAgent:
    """An agent that may transfer neither to its parent nor to its peers."""
    return LlmAgent(
        name=name, disallow_transfer_to_parent=True, disallow_transfer_to_peers=True, **kwargs
    )


def test_auto_to_auto_next_turn_goes_to_the_sub_agent() -> None:
    """Scenario 45."""
    llm = ScriptedLlm([transfer("sub_agent_1"), "response1", "response2"])
    root = LlmAgent(name="root_agent", model=llm, sub_agents=[LlmAgent(name="sub_agent_1")])
    harness = Harness(root)

    assert simplify_events(harness.turn()) == [*TRANSFER_1, "sub_agent_1: response1"]
    assert simplify_events(harness.turn()) == ["sub_agent_1: response2"]


def test_auto_to_single_next_turn_skips_the_non_transferable_sub_agent() -> None:
    """Scenario 46."""
    llm = ScriptedLlm([transfer("sub_agent_1"), "response1", "response2"])
    root = LlmAgent(name="root_agent", model=llm, sub_agents=[single("sub_agent_1")])
    harness = Harness(root)

    assert simplify_events(harness.turn()) == [*TRANSFER_1, "sub_agent_1: response1"]
    assert simplify_events(harness.turn()) == ["root_agent: response2"]


def test_auto_to_auto_to_single_next_turn_goes_to_the_last_transferable_agent() -> None:
    """Scenario 47."""
    llm = ScriptedLlm(
        [transfer("sub_agent_1"), transfer("sub_agent_1_1"), "response1", "response2"]
    )
    sub = LlmAgent(name="sub_agent_1", sub_agents=[single("sub_agent_1_1")])
    harness = Harness(LlmAgent(name="root_agent", model=llm, sub_agents=[sub]))

    assert simplify_events(harness.turn()) == [
        *TRANSFER_1,
        'sub_agent_1: FunctionCall(transfer_to_agent, {"agent_name": "sub_agent_1_1"})',
        "sub_agent_1: FunctionResponse(transfer_to_agent, {})",
        "sub_agent_1_1: response1",
    ]
    assert simplify_events(harness.turn()) == ["sub_agent_1: response2"]


def test_auto_to_sequential_runs_every_child_and_the_root_takes_the_next_turn() -> None:
    """Scenario 48."""
    llm = ScriptedLlm([transfer("sub_agent_1"), "response1", "response2", "response3"])
    sequence = SequentialAgent(
        name="sub_agent_1",
        sub_agents=[LlmAgent(name="sub_agent_1_1"), LlmAgent(name="sub_agent_1_2")],
    )
    harness = Harness(LlmAgent(name="root_agent", model=llm, sub_agents=[sequence]))

    assert simplify_events(harness.turn()) == [
        *TRANSFER_1,
        "sub_agent_1_1: response1",
        "sub_agent_1_2: response2",
    ]
    assert simplify_events(harness.turn()) == ["root_agent: response3"]


def exit_loop(tool_context: ToolContext) -> None:
    """Escalates only (unlike the built-in, it does not skip summarization)."""
    tool_context.actions.escalate = True


def test_auto_to_loop_stops_on_escalation_and_the_root_continues() -> None:
    """Scenario 49."""
    llm = ScriptedLlm(
        [
            transfer("sub_agent_1"),
            "response1",
            "response2",
            "response3",
            calls(call("exit_loop", {})),
            "response4",
            "response5",
        ]
    )
    loop = LoopAgent(
        name="sub_agent_1",
        sub_agents=[
            LlmAgent(name="sub_agent_1_1"),
            LlmAgent(name="sub_agent_1_2", tools=[exit_loop]),
        ],
    )
    harness = Harness(LlmAgent(name="root_agent", model=llm, sub_agents=[loop]))

    assert simplify_events(harness.turn()) == [
        *TRANSFER_1,
        "sub_agent_1_1: response1",
        "sub_agent_1_2: response2",
        "sub_agent_1_1: response3",
        "sub_agent_1_2: FunctionCall(exit_loop, {})",
        "sub_agent_1_2: FunctionResponse(exit_loop, {})",
        "root_agent: response4",
    ]
    assert simplify_events(harness.turn()) == ["root_agent: response5"]


def test_an_agent_whose_escalation_ends_its_loop_makes_no_further_model_call() -> None:
    """The loop's exit stops the escalating agent's own steps, not only the events shown."""
    llm = ScriptedLlm([calls(call("exit_loop", {})), "never asked", "after the loop"])
    loop = LoopAgent(name="loop", sub_agents=[LlmAgent(name="a", model=llm, tools=[exit_loop])])
    after = LlmAgent(name="b", model=llm)
    harness = Harness(SequentialAgent(name="root", sub_agents=[loop, after]))

    assert simplify_events(harness.turn()) == [
        "a: FunctionCall(exit_loop, {})",
        "a: FunctionResponse(exit_loop, {})",
        "b: never asked",
    ]
    assert len(llm.requests) == 2


def test_transfer_set_by_an_after_model_callback_stores_every_event_once() -> None:
    """Scenario 50."""

    def hand_over(callback_context: CallbackContext, llm_response: Any) -> None:
        if callback_context.agent_name == "root_agent":
            callback_context.actions.transfer_to_agent = "sub_agent_1"

    llm = ScriptedLlm(["root text", "sub text"])
    root = LlmAgent(
        name="root_agent",
        model=llm,
        sub_agents=[LlmAgent(name="sub_agent_1")],
        after_model_callback=hand_over,
    )
    harness = Harness(root)

    events = harness.turn()

    assert simplify_events(events) == ["root_agent: root text", "sub_agent_1: sub text"]
    assert events[0].actions.transfer_to_agent == "sub_agent_1"
    stored = [e.id for e in harness.session().events]
    assert len(stored) == len(set(stored)) == 3
    assert {e.id for e in events} <= set(stored)


def test_transfer_to_a_peer_or_the_parent_is_offered_unless_disallowed() -> None:
    llm = ScriptedLlm(["ok", "ok", "ok"])
    free = LlmAgent(name="free")
    closed = single("closed")
    LlmAgent(name="root_agent", model=llm, sub_agents=[free, closed])

    assert "transfer_to_agent" in free.tools_by_name()
    assert "transfer_to_agent" not in closed.tools_by_name()
    assert "transfer_to_agent" not in LlmAgent(name="alone", model=llm).tools_by_name()


def test_transfer_re_roots_the_invocation_so_the_target_sees_the_history() -> None:
    llm = ScriptedLlm([transfer("billing"), "billing answer"])
    root = LlmAgent(name="root_agent", model=llm, sub_agents=[LlmAgent(name="billing")])

    Harness(root).turn("my invoice is wrong")

    billing_request = llm.requests[1]
    texts = [p.text for c in billing_request.contents for p in c.parts or [] if p.text]
    assert texts[0] == "my invoice is wrong"
    assert 'Your internal name is "billing"' in billing_request.system_instruction_text()


def test_transfer_to_an_unknown_agent_errors_after_the_response_is_stored() -> None:
    llm = ScriptedLlm([transfer("nobody"), "unreachable"])
    root = LlmAgent(name="root_agent", model=llm, sub_agents=[LlmAgent(name="sub_agent_1")])
    harness = Harness(root)

    with pytest.raises(AgentNotFoundError, match="nobody"):
        harness.turn()

    assert simplify_events(harness.session().events[1:]) == [
        'root_agent: FunctionCall(transfer_to_agent, {"agent_name": "nobody"})',
        "root_agent: FunctionResponse(transfer_to_agent, {})",
    ]
