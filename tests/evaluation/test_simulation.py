"""Scenario cases: a simulated user on a model plays the conversation plan until it is done."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import LlmRequest, LlmResponse
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation import (
    EvalCase,
    EvalConfig,
    EvalSet,
    EvalStatus,
    LlmBackedUserSimulatorConfig,
    evaluate,
)
from adk_rx.testing import ScriptedLlm

from .support import desk_agent

SCENARIO = {
    "starting_prompt": "Hi there",
    "conversation_plan": "Ask where order 1234 is. When you know, you are done.",
}


def scenario_set(**scenario: Any) -> EvalSet:
    case = EvalCase.model_validate(
        {"eval_id": "sim", "conversation_scenario": {**SCENARIO, **scenario}}
    )
    return EvalSet(eval_set_id="sim", eval_cases=[case])


def config(user: Any, **criteria: Any) -> EvalConfig:
    return EvalConfig.from_mapping(
        {
            "criteria": criteria or {"tool_trajectory_avg_score": 1.0},
            "user_simulator_config": {"model": user, "max_allowed_invocations": 5},
        }
    )


def test_the_simulated_user_follows_the_plan_until_it_says_it_is_done() -> None:
    user = ScriptedLlm(["Where is order 1234?", "Thanks! </finished>"])
    judge = ScriptedLlm(
        ["ID: found\nProperty: The agent finds the order.\nRationale: r\nVerdict: yes"]
    )
    rubrics = [{"rubric_id": "found", "rubric_content": {"text_property": "The agent finds it."}}]
    multi_turn = {
        "threshold": 1.0,
        "rubrics": rubrics,
        "judge_model_options": {"judge_model": judge, "num_samples": 1},
    }
    eval_config = config(
        user,
        tool_trajectory_avg_score=1.0,
        rubric_based_multi_turn_trajectory_quality_v1=multi_turn,
    )

    [result] = evaluate(desk_agent(), scenario_set(), eval_config).cases

    assert [t.user_text for t in result.turns] == ["Hi there", "Where is order 1234?"]
    assert result.turns[1].actual_response == "Order 1234 is shipped with DHL."
    assert len(user.requests) == 2  # the second message and the one that ended it
    plan_prompt = user.requests[0].contents[0].parts[0].text or ""  # type: ignore[index]
    assert SCENARIO["conversation_plan"] in plan_prompt
    assert "desk: Hello! Ask me about an order." in plan_prompt
    assert "</finished>" in plan_prompt
    # turn-by-turn comparisons need expected turns, which a scenario has not
    [trajectory, judged] = result.outcomes
    assert trajectory.status is EvalStatus.NOT_EVALUATED and trajectory.error is None
    assert judged.score == 1.0
    metric = "rubric_based_multi_turn_trajectory_quality_v1"
    assert [t.scores.get(metric) for t in result.turns] == [None, 1.0]
    judge_prompt = judge.requests[0].contents[0].parts[0].text or ""  # type: ignore[index]
    assert "USER TURN 1: Hi there" in judge_prompt
    assert 'AGENT (desk) TURN 2 (tool call): lookup_order({"order_id": "1234"})' in judge_prompt
    assert result.passed


def test_the_conversation_stops_at_the_invocation_limit() -> None:
    def chatty(_: LlmRequest) -> LlmResponse:
        return LlmResponse.text("And order 5678?")

    user = ScriptedLlm([chatty] * 20)

    [result] = evaluate(desk_agent(), scenario_set(), config(user)).cases

    assert len(result.turns) == 5  # the starting prompt counts
    assert len(user.requests) == 4


def test_a_simulated_user_that_says_nothing_fails_the_case() -> None:
    [result] = evaluate(desk_agent(), scenario_set(), config(ScriptedLlm([""]))).cases

    assert not result.passed and result.error is not None
    assert "simulated user wrote no message" in result.error


def test_custom_instructions_must_carry_the_placeholders() -> None:
    with pytest.raises(ConfigurationError, match="conversation_history"):
        EvalConfig.from_mapping(
            {
                "user_simulator_config": {
                    "custom_instructions": "{{ stop_signal }} {{ conversation_plan }}"
                }
            }
        )
    custom = "Plan: {{ conversation_plan }}\nSo far: {{ conversation_history }}\n{{ stop_signal }}"
    user = ScriptedLlm(["</finished>"])
    LlmBackedUserSimulatorConfig(model=user, custom_instructions=custom)
    eval_config = EvalConfig.from_mapping(
        {"user_simulator_config": {"model": user, "custom_instructions": custom}}
    )

    evaluate(desk_agent(), scenario_set(), eval_config)

    sent = user.requests[0].contents[0].parts[0].text or ""  # type: ignore[index]
    assert sent.startswith("Plan: Ask where order 1234 is.")
    assert "So far: user: Hi there" in sent


def test_a_case_with_both_a_conversation_and_a_scenario_is_rejected() -> None:
    with pytest.raises(ValueError, match="not both"):
        EvalCase.model_validate(
            {"eval_id": "x", "conversation": [], "conversation_scenario": SCENARIO}
        )
