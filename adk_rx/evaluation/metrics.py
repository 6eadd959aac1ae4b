"""The metrics ``evaluate`` knows, by google-adk 2.13's names, and the criterion each takes.

=============================================== ============================ ==============
metric                                          criterion                    scored by
=============================================== ============================ ==============
``tool_trajectory_avg_score``                   ToolTrajectoryCriterion      comparison
``response_match_score``                        BaseCriterion                ROUGE-1
``final_response_match_v2``                     LlmAsAJudgeCriterion         judge
``rubric_based_final_response_quality_v1``      RubricsBasedCriterion        judge
``rubric_based_tool_use_quality_v1``            RubricsBasedCriterion        judge
``rubric_based_multi_turn_trajectory_quality_v1`` RubricsBasedCriterion      judge
``hallucinations_v1``                           HallucinationsCriterion      judge
=============================================== ============================ ==============

google-adk scores ``safety_v1``, ``response_evaluation_score``, ``multi_turn_task_success_v1``,
``multi_turn_trajectory_quality_v1`` and ``multi_turn_tool_use_quality_v1`` on Vertex AI's
Gen AI evaluation service (a Google Cloud project and credentials); adk_rx runs offline and
leaves them out: naming one is a :class:`~adk_rx.errors.ConfigurationError` that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pydantic

from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.criteria import (
    BaseCriterion,
    HallucinationsCriterion,
    LlmAsAJudgeCriterion,
    RubricsBasedCriterion,
    ToolTrajectoryCriterion,
    criterion_as,
)
from adk_rx.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
from adk_rx.evaluation.hallucinations import HallucinationsEvaluator
from adk_rx.evaluation.metric_result import MetricEvaluator
from adk_rx.evaluation.response_match import ResponseMatchEvaluator
from adk_rx.evaluation.rubric_metrics import (
    MultiTurnTrajectoryRubricEvaluator,
    RubricFinalResponseEvaluator,
    RubricToolUseEvaluator,
)
from adk_rx.evaluation.trajectory import TrajectoryEvaluator

__all__ = ["CLOUD_ONLY_METRICS", "METRICS", "evaluator_for", "parse_criterion"]

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"

METRICS: Mapping[str, tuple[type[BaseCriterion], Callable[[Any], MetricEvaluator]]] = {
    TRAJECTORY: (ToolTrajectoryCriterion, TrajectoryEvaluator),
    RESPONSE: (BaseCriterion, ResponseMatchEvaluator),
    "final_response_match_v2": (LlmAsAJudgeCriterion, FinalResponseMatchV2Evaluator),
    "rubric_based_final_response_quality_v1": (
        RubricsBasedCriterion,
        RubricFinalResponseEvaluator,
    ),
    "rubric_based_tool_use_quality_v1": (RubricsBasedCriterion, RubricToolUseEvaluator),
    "rubric_based_multi_turn_trajectory_quality_v1": (
        RubricsBasedCriterion,
        MultiTurnTrajectoryRubricEvaluator,
    ),
    "hallucinations_v1": (HallucinationsCriterion, HallucinationsEvaluator),
}
"""metric name -> (its criterion type, the evaluator made from a criterion)."""

CLOUD_ONLY_METRICS = frozenset(
    {
        "safety_v1",
        "response_evaluation_score",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    }
)
"""google-adk's metrics that Vertex AI's evaluation service scores: refused (adk_rx evaluates
offline)."""


def parse_criterion(name: str, value: Any) -> BaseCriterion:
    """The criterion of metric ``name`` from a threshold, a JSON object or a criterion.

    Raises:
        ConfigurationError: an unknown or cloud-only metric, or a criterion that does not fit.
    """
    if name in CLOUD_ONLY_METRICS:
        raise ConfigurationError(
            f"metric {name!r} is scored by Vertex AI's Gen AI evaluation service in google-adk "
            "(a Google Cloud project); adk_rx evaluates offline and does not have it"
        )
    if name not in METRICS:
        raise ConfigurationError(
            f"metric {name!r} is not supported (supported: {', '.join(METRICS)})"
        )
    kind, _ = METRICS[name]
    if isinstance(value, bool) or not isinstance(value, int | float | Mapping | BaseCriterion):
        raise ConfigurationError(
            f"the criterion of {name!r} must be a threshold or an object, got {value!r}"
        )
    try:
        return criterion_as(kind, value)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'the value'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
        raise ConfigurationError(f"the criterion of {name!r} is not valid: {problems}") from exc


def evaluator_for(name: str, criterion: BaseCriterion) -> MetricEvaluator:
    """A new evaluator of metric ``name`` for ``criterion``."""
    kind, make = METRICS[name]
    return make(criterion_as(kind, criterion))
