"""The evaluation names of the contract import from ``adk_rx.evaluation``, each documented."""

from __future__ import annotations

import adk_rx.evaluation as evaluation

CONTRACT = {
    "EvalSet", "EvalCase", "EvalResult", "evaluate", "ConversationScenario", "AgentEvaluator",
    "EvalConfig", "ToolTrajectoryCriterion", "JudgeModelOptions", "LlmBackedUserSimulatorConfig",
}  # fmt: skip


def test_the_contract_names_are_exported_and_documented() -> None:
    assert set(evaluation.__all__) >= CONTRACT
    for name in evaluation.__all__:
        value = getattr(evaluation, name)
        if callable(value):
            assert (value.__doc__ or "").strip(), name


def test_each_supported_metric_has_a_criterion_and_the_cloud_ones_are_named() -> None:
    assert set(evaluation.METRICS) == {
        "tool_trajectory_avg_score",
        "response_match_score",
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "rubric_based_tool_use_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
        "hallucinations_v1",
    }
    assert "safety_v1" in evaluation.CLOUD_ONLY_METRICS
