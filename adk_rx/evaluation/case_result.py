"""The results of ``evaluate``: per set, per case, per metric and per turn.

:meth:`EvalResult.to_dict` is google-adk's ``EvalSetResult`` JSON (google-adk's pydantic model
loads it): per case ``final_eval_status`` (1 passed, 2 failed, 3 not evaluated),
``overall_eval_metric_results`` and ``eval_metric_result_per_invocation`` with the actual and
expected turns. adk_rx adds ``error`` and ``seconds`` to a case (google-adk ignores them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from adk_rx.evaluation.criteria import BaseCriterion, EvalStatus, RubricScore
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.metric_result import EvaluationResult, PerInvocationResult

__all__ = ["CaseResult", "EvalResult", "MetricOutcome", "TurnResult"]


@dataclass(frozen=True)
class MetricOutcome:
    """One metric on one case: its result, or why it has none."""

    name: str
    criterion: BaseCriterion
    result: EvaluationResult | None = None
    error: str | None = None
    note: str | None = None

    @property
    def score(self) -> float | None:
        """The case's score (None: not evaluated)."""
        return self.result.overall_score if self.result else None

    @property
    def status(self) -> EvalStatus:
        """PASSED, FAILED (also when the metric raised) or NOT_EVALUATED."""
        if self.error is not None:
            return EvalStatus.FAILED
        return self.result.overall_status if self.result else EvalStatus.NOT_EVALUATED

    def turn_score(self, index: int) -> float | None:
        """The score of one turn (None when it has none)."""
        turns = self.result.per_invocation if self.result else []
        return turns[index].score if index < len(turns) else None

    def to_dict(self, result: EvaluationResult | PerInvocationResult | None = None) -> dict:
        """google-adk's ``EvalMetricResult`` for the case (or for one turn's ``result``)."""
        if isinstance(result, PerInvocationResult):
            score, status, rubrics = result.score, result.status, result.rubric_scores
        else:
            score, status = self.score, self.status
            rubrics = self.result.overall_rubric_scores if self.result else None
        return {
            "metric_name": self.name,
            "threshold": self.criterion.threshold,
            "criterion": self.criterion.model_dump(mode="json"),
            "score": score,
            "eval_status": status.value,
            "details": {"rubric_scores": _rubrics(rubrics)},
        }


def _rubrics(scores: list[RubricScore] | None) -> list[dict[str, Any]] | None:
    return None if scores is None else [s.model_dump(mode="json") for s in scores]


@dataclass(frozen=True)
class TurnResult:
    """What one turn of a case did, next to what it should have done."""

    user_text: str
    expected_tool_uses: list[types.FunctionCall]
    actual_tool_uses: list[types.FunctionCall]
    expected_response: str | None
    actual_response: str
    trajectory_match: bool | None
    response_score: float | None
    scores: dict[str, float | None] = field(default_factory=dict)
    actual: EvalInvocation | None = None
    expected: EvalInvocation | None = None


@dataclass(frozen=True)
class CaseResult:
    """The scores of one eval case.

    Attributes:
        eval_id: the case.
        criteria: metric name -> the criterion it was scored by.
        status: PASSED, FAILED or NOT_EVALUATED (no metric could score it).
        outcomes: per metric, its result or error.
        error: why the case failed to run (``"TypeError: ..."``), or None.
        turns: per turn, expected against actual.
        session_id: the session the case ran in.
        user_id: its user.
        seconds: how long the case took.
        traceback: the error's traceback.
    """

    eval_id: str
    criteria: Mapping[str, BaseCriterion]
    status: EvalStatus
    outcomes: list[MetricOutcome] = field(default_factory=list)
    error: str | None = None
    turns: list[TurnResult] = field(default_factory=list)
    session_id: str = ""
    user_id: str = "eval_user"
    seconds: float = 0.0
    traceback: str | None = None

    @property
    def passed(self) -> bool:
        """True when the case ran and its status is PASSED."""
        return self.error is None and self.status is EvalStatus.PASSED

    @property
    def scores(self) -> dict[str, float]:
        """metric name -> score, for the metrics that got one."""
        return {o.name: o.score for o in self.outcomes if o.score is not None}

    @property
    def thresholds(self) -> dict[str, float]:
        """metric name -> the threshold it had to reach."""
        return {name: criterion.threshold for name, criterion in self.criteria.items()}

    @property
    def metric_errors(self) -> dict[str, str]:
        """metric name -> why it could not score the case."""
        return {o.name: o.error for o in self.outcomes if o.error is not None}

    def to_dict(self, eval_set_id: str) -> dict[str, Any]:
        """google-adk's ``EvalCaseResult`` shape."""
        per_turn = []
        for index, turn in enumerate(self.turns):
            if turn.actual is None:
                continue
            results = []
            for outcome in self.outcomes:
                found = outcome.result.per_invocation if outcome.result else []
                entry = (
                    found[index] if index < len(found) else PerInvocationResult(turn.actual, None)
                )
                results.append(outcome.to_dict(entry))
            per_turn.append(
                {
                    "actual_invocation": _invocation(turn.actual),
                    "expected_invocation": _invocation(turn.expected) if turn.expected else None,
                    "eval_metric_results": results,
                }
            )
        return {
            "eval_set_file": eval_set_id,
            "eval_set_id": eval_set_id,
            "eval_id": self.eval_id,
            "final_eval_status": (EvalStatus.FAILED if self.error else self.status).value,
            "overall_eval_metric_results": [o.to_dict() for o in self.outcomes],
            "eval_metric_result_per_invocation": per_turn,
            "session_id": self.session_id,
            "user_id": self.user_id,
            "error": self.error,
            "metric_errors": self.metric_errors,
            "seconds": round(self.seconds, 3),
        }


def _invocation(turn: EvalInvocation) -> dict[str, Any]:
    return turn.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class EvalResult:
    """The results of one eval set: ``passed`` and one :class:`CaseResult` per case."""

    eval_set_id: str
    cases: list[CaseResult]
    criteria: Mapping[str, BaseCriterion]

    @property
    def passed(self) -> bool:
        """True when every case passed."""
        return all(case.passed for case in self.cases)

    def to_dict(self) -> dict[str, Any]:
        """google-adk's ``EvalSetResult`` shape, as written by ``adk-rx eval``."""
        created = time.time()
        name = f"{self.eval_set_id}_{created:.0f}"
        return {
            "eval_set_result_id": name,
            "eval_set_result_name": name,
            "eval_set_id": self.eval_set_id,
            "eval_case_results": [case.to_dict(self.eval_set_id) for case in self.cases],
            "creation_timestamp": created,
        }
