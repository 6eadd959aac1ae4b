"""Rubric-based judging: the judge says yes or no to each property (google-adk 2.13's
``RubricBasedEvaluator``), shared by the ``rubric_based_*`` metrics.

* The rubrics of a turn are the criterion's, plus the turn's own of the metric's type
  (``FINAL_RESPONSE_QUALITY``, ``TOOL_USE_QUALITY``, ``TRAJECTORY_QUALITY``); a repeated id
  or no rubric at all is an error.
* The judge answers blocks of ``ID: ...`` / ``Property: ...`` / ``Rationale: ...`` /
  ``Verdict: yes|no``; a verdict containing "yes" is 1.0, "no" 0.0, else None. An answer
  whose property, rationale and verdict counts differ is unreadable (no verdicts), so a
  partial answer cannot inflate a score. A block is matched to a rubric by its id, else by
  its property text (normalized: quotes, dashes, markdown decoration, case).
* A turn's samples: per rubric, the majority of yes over no (a tie is no); the turn's score
  is the mean of its rubrics' verdicts. The case: each rubric's mean over turns, and the
  overall score the mean of every verdict of every turn.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from dataclasses import dataclass

from adk_rx.evaluation.criteria import RubricsBasedCriterion, RubricScore
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import content_text
from adk_rx.evaluation.judge import AutoRaterScore, LlmJudge
from adk_rx.evaluation.metric_result import EvaluationResult, PerInvocationResult, status_of
from adk_rx.models.llm_response import LlmResponse

__all__ = ["RubricBasedEvaluator", "RubricVerdict", "mean_score", "parse_verdicts"]

_ID = re.compile(r"(?m)^\s*ID: (.*)$")
_PROPERTY = re.compile(r"(?m)^\s*Property: (.*)$")
_RATIONALE = re.compile(r"(?<=Rationale: )(.*)")
_VERDICT = re.compile(r"(?<=Verdict: )(.*)")
_SMART = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_DECORATION = " *_`#>-\u2022\"'"
_SPACES = re.compile(r"\s+")
_AGGREGATED = (
    "This is an aggregated score derived from individual entries. Please refer to individual"
    " entries in each invocation for actual rationale from the model."
)


@dataclass(frozen=True)
class RubricVerdict:
    """One block of the judge's answer."""

    rubric_id: str | None
    property_text: str
    rationale: str
    score: float | None


def parse_verdicts(answer: str) -> list[RubricVerdict]:
    """The judge's blocks, or none when the answer does not hold them consistently."""
    properties = list(_PROPERTY.finditer(answer))
    ids = list(_ID.finditer(answer))
    rationales = _RATIONALE.findall(answer)
    scores: list[float | None] = []
    for verdict in _VERDICT.findall(answer):
        lowered = verdict.lower()
        scores.append(1.0 if "yes" in lowered else 0.0 if "no" in lowered else None)
    if not len(properties) == len(rationales) == len(scores):
        return []
    verdicts = []
    for i, (prop, rationale, score) in enumerate(zip(properties, rationales, scores, strict=True)):
        # the id line just before this property (never a later block's)
        after = properties[i - 1].start() if i else -1
        rubric_id = None
        for found in ids:
            if after < found.start() < prop.start():
                rubric_id = found.group(1).strip() or None
        verdicts.append(RubricVerdict(rubric_id, prop.group(1).strip(), rationale.strip(), score))
    return verdicts


def normalized(text: object) -> str:
    """Rubric text as compared with the judge's echo of it."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text).translate(_SMART)
    return _SPACES.sub(" ", text).strip(_DECORATION).lower()


def mean_score(scores: list[RubricScore]) -> float | None:
    """The mean of the verdicts that have one (None when none has)."""
    found = [s.score for s in scores if s.score is not None]
    return statistics.mean(found) if found else None


class RubricBasedEvaluator(LlmJudge):
    """A judge of rubrics; a subclass sets ``rubric_type`` and writes the prompt."""

    rubric_type = ""

    def __init__(self, criterion: RubricsBasedCriterion) -> None:
        super().__init__(criterion, criterion.judge_model_options)
        self.rubrics = list(criterion.rubrics)
        self.include_intermediate = criterion.include_intermediate_responses_in_final

    def rubrics_for(self, turn: EvalInvocation) -> list:
        """The criterion's rubrics and the turn's own of this metric's type."""
        by_id: dict[str, object] = {}
        own = [r for r in turn.rubrics or [] if not self.rubric_type or r.type == self.rubric_type]
        for rubric in [*self.rubrics, *own]:
            if rubric.rubric_id in by_id:
                raise ValueError(f"the rubric id {rubric.rubric_id!r} is used twice")
            by_id[rubric.rubric_id] = rubric
        if not by_id:
            raise ValueError("this metric needs rubrics (in the criterion or the case)")
        return list(by_id.values())

    def rubric_lines(self, turn: EvalInvocation) -> str:
        """The rubrics as the prompt lists them."""
        return "\n".join(
            f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}"
            for r in self.rubrics_for(turn)
        )

    def score_of(self, response: LlmResponse, actual: EvalInvocation) -> AutoRaterScore:
        """The verdicts matched to the turn's rubrics; the score is their mean."""
        text = content_text(response.content)
        verdicts = parse_verdicts(text) if text else []
        rubrics = self.rubrics_for(actual)
        by_id = {r.rubric_id: r for r in rubrics}
        by_text = {normalized(r.rubric_content.text_property): r for r in rubrics}
        scores = []
        for verdict in verdicts:
            rubric = by_id.get(verdict.rubric_id) if verdict.rubric_id else None
            rubric = rubric or by_text.get(normalized(verdict.property_text))
            if rubric is not None:
                scores.append(
                    RubricScore(
                        rubric_id=rubric.rubric_id, rationale=verdict.rationale, score=verdict.score
                    )
                )
        return AutoRaterScore(mean_score(scores), scores)

    def combine_samples(self, samples: list[PerInvocationResult]) -> PerInvocationResult:
        """Per rubric, the majority of yes over no (a tie is no)."""
        votes: dict[str, tuple[list[RubricScore], list[RubricScore], list[RubricScore]]] = {}
        for sample in samples:
            for score in sample.rubric_scores or []:
                none, yes, no = votes.setdefault(score.rubric_id, ([], [], []))
                (none if score.score is None else yes if score.score == 1.0 else no).append(score)
        chosen = [
            none[0] if not yes and not no else yes[0] if len(yes) > len(no) else no[0]
            for none, yes, no in votes.values()
        ]
        score = mean_score(chosen)
        first = samples[0]
        return PerInvocationResult(
            first.actual, first.expected, score, status_of(score, self.threshold), chosen
        )

    def combine_turns(self, results: list[PerInvocationResult]) -> EvaluationResult:
        """Each rubric's mean over the turns; overall, the mean of every verdict."""
        every: list[RubricScore] = []
        by_rubric: dict[str, list[RubricScore]] = {}
        for result in results:
            for score in result.rubric_scores or []:
                by_rubric.setdefault(score.rubric_id, []).append(score)
                every.append(score)
        summary = [
            RubricScore(rubric_id=rubric_id, rationale=_AGGREGATED, score=mean_score(scores))
            for rubric_id, scores in by_rubric.items()
        ]
        overall = mean_score(every)
        return EvaluationResult(overall, status_of(overall, self.threshold), results, summary)
