"""google-adk's eval config: ``{"criteria": {metric: threshold | criterion}}``, typed.

The shapes are google-adk 2.13's (``google.adk.evaluation.eval_metrics`` and ``eval_config``),
so a team's ``test_config.json`` runs unchanged::

    {"criteria": {
       "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
       "response_match_score": 0.8,
       "final_response_match_v2": {"threshold": 0.5,
                                   "judge_model_options": {"judge_model": "gemini-2.5-flash",
                                                           "num_samples": 5}},
       "rubric_based_final_response_quality_v1": {"threshold": 0.8, "rubrics": [
          {"rubric_id": "concise", "rubric_content": {"text_property": "The answer is short."}}]}}}

``judge_model`` may also be a :class:`~adk_rx.models.base.BaseLlm` (any model adk_rx speaks,
a ``ScriptedLlm`` in tests); a name is resolved through ``LlmRegistry``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

from adk_rx.models.base import BaseLlm

__all__ = [
    "BaseCriterion",
    "EvalStatus",
    "HallucinationsCriterion",
    "JudgeModelOptions",
    "LlmAsAJudgeCriterion",
    "LlmBackedUserSimulatorCriterion",
    "Rubric",
    "RubricContent",
    "RubricScore",
    "RubricsBasedCriterion",
    "ToolTrajectoryCriterion",
]


class EvalStatus(enum.Enum):
    """A verdict, numbered as google-adk numbers it in result files."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True
    )


class RubricContent(_Model):
    """The property a rubric checks (``text_property``)."""

    text_property: str | None = None


class Rubric(_Model):
    """One property the judge says yes or no to.

    Attributes:
        rubric_id: unique among the rubrics of a metric.
        rubric_content: the property.
        description: how to read the result.
        type: e.g. ``FINAL_RESPONSE_QUALITY``; an invocation's rubrics are filtered by it.
    """

    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class RubricScore(_Model):
    """The judge's verdict on one rubric: 1.0 yes, 0.0 no, None not assessed."""

    rubric_id: str
    rationale: str | None = None
    score: float | None = None


class JudgeModelOptions(_Model):
    """The judge: a model name (through ``LlmRegistry``) or a model, sampled ``num_samples``
    times per invocation, at most ``parallelism_limit`` calls at once."""

    judge_model: str | BaseLlm = "gemini-2.5-flash"
    judge_model_config: types.GenerateContentConfig | None = None
    num_samples: int = pydantic.Field(default=5, ge=1)
    parallelism_limit: int = pydantic.Field(default=1, ge=1)

    @pydantic.field_serializer("judge_model")
    def _model_name(self, value: str | BaseLlm) -> str:
        return value if isinstance(value, str) else value.model


class BaseCriterion(_Model):
    """A threshold; metrics that need more take a subclass. Unknown fields are kept."""

    model_config = pydantic.ConfigDict(extra="allow")

    threshold: float
    include_intermediate_responses_in_final: bool = False


class LlmAsAJudgeCriterion(BaseCriterion):
    """A threshold and the judge (``final_response_match_v2``)."""

    judge_model_options: JudgeModelOptions = pydantic.Field(default_factory=JudgeModelOptions)


class RubricsBasedCriterion(BaseCriterion):
    """A threshold, the judge and the rubrics (the ``rubric_based_*`` metrics)."""

    judge_model_options: JudgeModelOptions = pydantic.Field(default_factory=JudgeModelOptions)
    rubrics: list[Rubric] = []


class HallucinationsCriterion(BaseCriterion):
    """A threshold, the judge, and whether texts said before the final one are checked."""

    judge_model_options: JudgeModelOptions = pydantic.Field(default_factory=JudgeModelOptions)
    evaluate_intermediate_nl_responses: bool = False


class LlmBackedUserSimulatorCriterion(LlmAsAJudgeCriterion):
    """A judge of the simulated user, and the text that ends a simulated conversation."""

    stop_signal: str = "</finished>"


class ToolTrajectoryCriterion(BaseCriterion):
    """How the called tools are compared with the expected ones (``match_type``) and whether
    their arguments count (``ignore_args``)."""

    class MatchType(enum.Enum):
        """EXACT: the same calls in the same order, nothing else. IN_ORDER: the expected calls
        appear in order, other calls may come between. ANY_ORDER: each expected call appears,
        in any order, other calls allowed."""

        EXACT = 0
        IN_ORDER = 1
        ANY_ORDER = 2

    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False

    @pydantic.field_validator("match_type", mode="before")
    @classmethod
    def _by_name(cls, value: object) -> object:
        if isinstance(value, str):
            name = value.strip().upper().replace("-", "_").replace(" ", "_")
            if name in cls.MatchType.__members__:
                return cls.MatchType[name]
        return value


def criterion_as(kind: type[BaseCriterion], value: float | Mapping[str, Any] | BaseCriterion):
    """``value`` (a threshold, a JSON object or another criterion) as a ``kind``.

    Raises:
        pydantic.ValidationError: the value does not fit ``kind``.
    """
    if isinstance(value, kind):
        return value
    if isinstance(value, BaseCriterion):
        data: Any = {**dict(value), **(value.model_extra or {})}
        return kind.model_validate(data)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return kind(threshold=float(value))
    return kind.model_validate(value)
