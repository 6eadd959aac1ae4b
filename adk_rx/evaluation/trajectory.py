"""``tool_trajectory_avg_score``: did the agent call the expected tools, per turn, averaged.

As google-adk 2.13's ``TrajectoryEvaluator``: a turn scores 1.0 when its calls match the
expected ones under the criterion's ``match_type``, else 0.0; the case's score is the mean.

* ``EXACT``: the same calls (name and arguments), in the same order, nothing else;
* ``IN_ORDER``: the expected calls appear in that order; other calls may come between;
* ``ANY_ORDER``: each expected call appears (each actual call matches at most one), in any
  order; other calls may come between.

``ignore_args`` compares names only. Arguments compare as Python values (``3 == 3.0``).
"""

from __future__ import annotations

from collections.abc import Sequence

import reactivex as rx
from google.genai import types
from reactivex import Observable

from adk_rx.evaluation.criteria import ToolTrajectoryCriterion
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import tool_calls
from adk_rx.evaluation.metric_result import (
    EvaluationResult,
    PerInvocationResult,
    check_lengths,
    status_of,
)
from adk_rx.evaluation.scenario import ConversationScenario

__all__ = ["TrajectoryEvaluator", "trajectory_matches"]

MatchType = ToolTrajectoryCriterion.MatchType


def trajectory_matches(
    actual: Sequence[types.FunctionCall],
    expected: Sequence[types.FunctionCall],
    match_type: MatchType = MatchType.EXACT,
    *,
    ignore_args: bool = False,
) -> bool:
    """True when ``actual`` satisfies ``expected`` under ``match_type``."""

    def same(a: types.FunctionCall, e: types.FunctionCall) -> bool:
        return a.name == e.name and (ignore_args or a.args == e.args)

    if match_type is MatchType.EXACT:
        return len(actual) == len(expected) and all(map(same, actual, expected))
    if match_type is MatchType.IN_ORDER:
        remaining = iter(actual)
        return all(any(same(a, e) for a in remaining) for e in expected)
    left = list(actual)
    for e in expected:
        found = next((i for i, a in enumerate(left) if same(a, e)), None)
        if found is None:
            return False
        left.pop(found)
    return True


class TrajectoryEvaluator:
    """Scores ``tool_trajectory_avg_score`` for one criterion."""

    def __init__(self, criterion: ToolTrajectoryCriterion) -> None:
        self.criterion = criterion

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """Per turn 1.0 or 0.0; overall their mean (needs the expected turns)."""
        return rx.defer(lambda _: rx.just(self._score(actual, expected)))

    def _score(
        self, actual: Sequence[EvalInvocation], expected: Sequence[EvalInvocation] | None
    ) -> EvaluationResult:
        if expected is None:
            raise ValueError("tool_trajectory_avg_score needs the expected turns")
        check_lengths(actual, expected)
        threshold = self.criterion.threshold
        results = []
        for got, want in zip(actual, expected, strict=True):
            matched = trajectory_matches(
                tool_calls(got.intermediate_data),
                tool_calls(want.intermediate_data),
                self.criterion.match_type,
                ignore_args=self.criterion.ignore_args,
            )
            score = 1.0 if matched else 0.0
            results.append(PerInvocationResult(got, want, score, status_of(score, threshold)))
        if not results:
            return EvaluationResult()
        overall = sum(r.score or 0.0 for r in results) / len(results)
        return EvaluationResult(overall, status_of(overall, threshold), results)
