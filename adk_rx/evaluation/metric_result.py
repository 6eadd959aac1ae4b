"""What a metric says about one case: a score per turn and an overall score, with verdicts.

Every metric's evaluator is the same one-method seam as google-adk's ``Evaluator``::

    evaluate_invocations(actual, expected, conversation_scenario) -> Observable[EvaluationResult]

(cold, one item; a judge's model calls run when it is subscribed). A score of None means the
metric could not assess the turn (NOT_EVALUATED), which is neither a pass nor a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from reactivex import Observable

from adk_rx.evaluation.criteria import EvalStatus, RubricScore

if TYPE_CHECKING:
    from adk_rx.evaluation.evalset import EvalInvocation
    from adk_rx.evaluation.scenario import ConversationScenario

__all__ = ["EvaluationResult", "MetricEvaluator", "PerInvocationResult", "status_of"]


def status_of(score: float | None, threshold: float) -> EvalStatus:
    """PASSED at or above the threshold, FAILED below, NOT_EVALUATED without a score."""
    if score is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED


@dataclass(frozen=True)
class PerInvocationResult:
    """A metric's score for one turn."""

    actual: EvalInvocation
    expected: EvalInvocation | None
    score: float | None = None
    status: EvalStatus = EvalStatus.NOT_EVALUATED
    rubric_scores: list[RubricScore] | None = None


@dataclass(frozen=True)
class EvaluationResult:
    """A metric's overall score for a case, and the per-turn results it came from."""

    overall_score: float | None = None
    overall_status: EvalStatus = EvalStatus.NOT_EVALUATED
    per_invocation: list[PerInvocationResult] = field(default_factory=list)
    overall_rubric_scores: list[RubricScore] | None = None


class MetricEvaluator(Protocol):
    """Scores a case's actual turns against the expected ones."""

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """The metric's result for the case (cold; one item)."""
        ...


def check_lengths(
    actual: Sequence[EvalInvocation], expected: Sequence[EvalInvocation] | None
) -> None:
    """Raises ValueError when the turns cannot be paired one to one (google-adk's rule)."""
    if expected is not None and len(actual) != len(expected):
        raise ValueError(
            f"the case has {len(expected)} expected turns but the agent ran {len(actual)}"
        )
