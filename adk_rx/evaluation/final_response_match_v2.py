"""``final_response_match_v2``: a judge says whether each final answer is valid against the
expected one (google-adk 2.13's ``FinalResponseMatchV2Evaluator``).

The judge answers JSON with ``"is_the_agent_response_valid": "valid" | "invalid"``; it is
read with google-adk's pattern (``true`` counts as valid; ``almost``, ``false`` and
``partially valid`` as invalid; anything else, or a missing field, as no verdict). A turn's
samples are a majority vote (a tie is invalid; no readable sample leaves the turn
NOT_EVALUATED); the case's score is the fraction of evaluated turns that are valid.
"""

from __future__ import annotations

import re

from adk_rx.evaluation.criteria import EvalStatus, LlmAsAJudgeCriterion
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import content_text
from adk_rx.evaluation.judge import AutoRaterScore, LlmJudge
from adk_rx.evaluation.judged_text import answer_text
from adk_rx.evaluation.metric_result import EvaluationResult, PerInvocationResult, status_of
from adk_rx.evaluation.prompts.final_response_match_v2 import PROMPT
from adk_rx.models.llm_response import LlmResponse

__all__ = ["FinalResponseMatchV2Evaluator", "parse_validity"]

_VALID = re.compile(
    r'"is_the_agent_response_valid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]'
)
_INVALID = re.compile(
    r'"is_the_agent_response_invalid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]'
)
_NEGATIVE = {"invalid", "almost", "false", "partially_valid", "partially valid", "partially"}


def parse_validity(answer: str) -> bool | None:
    """True (valid), False (invalid) or None (no verdict found) from a judge's answer."""
    found = _VALID.search(answer)
    if found:
        label = found.group(1).strip().rstrip(",}")
        if label in _NEGATIVE:
            return False
        return True if label in ("valid", "true") else None
    found = _INVALID.search(answer)
    if found:
        return found.group(1).strip().rstrip(",}") not in ("true", "invalid")
    return None


class FinalResponseMatchV2Evaluator(LlmJudge):
    """Scores ``final_response_match_v2`` for one criterion."""

    expected_required = True

    def __init__(self, criterion: LlmAsAJudgeCriterion) -> None:
        super().__init__(criterion, criterion.judge_model_options)
        self.include_intermediate = criterion.include_intermediate_responses_in_final

    def prompt_for(self, actual: EvalInvocation, expected: EvalInvocation | None) -> str:
        """The prompt with the user's message, the agent's answer and the expected one."""
        if expected is None:
            raise ValueError("final_response_match_v2 needs the expected turns")
        return PROMPT.format(
            prompt=content_text(expected.user_content),
            response=answer_text(actual, self.include_intermediate) or "",
            golden_response=answer_text(expected, self.include_intermediate) or "",
        )

    def score_of(self, response: LlmResponse, actual: EvalInvocation) -> AutoRaterScore:
        """1.0 valid, 0.0 invalid, None without a verdict."""
        text = content_text(response.content)
        verdict = None if text is None else parse_validity(text)
        return AutoRaterScore(None if verdict is None else float(verdict))

    def combine_samples(self, samples: list[PerInvocationResult]) -> PerInvocationResult:
        """The majority's first sample; a tie goes to invalid."""
        valid = [s for s in samples if s.score == 1.0]
        invalid = [s for s in samples if s.score == 0.0]
        if not valid and not invalid:
            return samples[0]
        return valid[0] if len(valid) > len(invalid) else invalid[0]

    def combine_turns(self, results: list[PerInvocationResult]) -> EvaluationResult:
        """The fraction of evaluated turns judged valid."""
        scored = [
            r.score for r in results if r.score is not None and r.status != EvalStatus.NOT_EVALUATED
        ]
        if not scored:
            return EvaluationResult(per_invocation=results)
        overall = sum(scored) / len(scored)
        return EvaluationResult(overall, status_of(overall, self.threshold), results)
