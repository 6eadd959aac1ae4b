"""``response_match_score``: ROUGE-1 F1 of each turn's final text against the expected one,
averaged over the turns (google-adk 2.13's ``RougeEvaluator``).

A turn without an expected answer is compared with the empty text, as google-adk does; the
texts of a response's parts are joined by newlines. One difference: when neither the expected
nor the actual answer has any text (a turn that ends on a long-running call, say), the turn
scores 1.0, where google-adk scores 0.0 and so fails every such recorded case.
"""

from __future__ import annotations

from collections.abc import Sequence

import reactivex as rx
from reactivex import Observable

from adk_rx.evaluation.criteria import BaseCriterion
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import content_text
from adk_rx.evaluation.metric_result import (
    EvaluationResult,
    PerInvocationResult,
    check_lengths,
    status_of,
)
from adk_rx.evaluation.scenario import ConversationScenario
from adk_rx.evaluation.scoring import rouge1_f1

__all__ = ["ResponseMatchEvaluator"]


class ResponseMatchEvaluator:
    """Scores ``response_match_score`` for one criterion."""

    def __init__(self, criterion: BaseCriterion) -> None:
        self.criterion = criterion

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """Per turn the F1; overall their mean (needs the expected turns)."""
        return rx.defer(lambda _: rx.just(self._score(actual, expected)))

    def _score(
        self, actual: Sequence[EvalInvocation], expected: Sequence[EvalInvocation] | None
    ) -> EvaluationResult:
        if expected is None:
            raise ValueError("response_match_score needs the expected turns")
        check_lengths(actual, expected)
        threshold = self.criterion.threshold
        results = []
        for got, want in zip(actual, expected, strict=True):
            said = content_text(got.final_response) or ""
            wanted = content_text(want.final_response) or ""
            score = rouge1_f1(said, wanted) if said or wanted else 1.0
            results.append(PerInvocationResult(got, want, score, status_of(score, threshold)))
        if not results:
            return EvaluationResult()
        overall = sum(r.score or 0.0 for r in results) / len(results)
        return EvaluationResult(overall, status_of(overall, threshold), results)
