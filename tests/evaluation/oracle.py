"""google-adk 2.13 as the oracle: its own evaluators, fed the same turns adk_rx scored.

:func:`google_adk_scores` turns adk_rx's actual and expected turns into google-adk's
``Invocation`` objects (through their JSON) and runs google-adk's evaluator for a metric
with the same config entry, built by google-adk's own ``EvalConfig`` and metric registry.
:class:`JudgeScript` answers judge prompts from their content (and how many times each prompt
was asked), so a judge on either side says the same thing for the same prompt;
:class:`GoogleAdkJudge` is that judge as a google-adk model, registered for ``oracle-judge-.*``.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Any, ClassVar

from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
from google.adk.evaluation.hallucinations_v1 import HallucinationsV1Evaluator
from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
    RubricBasedFinalResponseQualityV1Evaluator,
)
from google.adk.evaluation.rubric_based_multi_turn_trajectory_evaluator import (
    RubricBasedMultiTurnTrajectoryEvaluator,
)
from google.adk.evaluation.rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types

from adk_rx import LlmRequest, LlmResponse
from adk_rx.evaluation import CaseResult, EvalInvocation
from adk_rx.testing import ScriptedLlm

JUDGE = "oracle-judge-1"


class JudgeScript:
    """Answers a prompt with ``answer(prompt, n)``, n counting the times that prompt was asked;
    keeps every prompt in order."""

    def __init__(self, answer: Callable[[str, int], str]) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self._asked: Counter[str] = Counter()

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        n = self._asked[prompt]
        self._asked[prompt] += 1
        return self.answer(prompt, n)

    def as_adk_rx_model(self, calls: int = 500) -> ScriptedLlm:
        """The judge as adk_rx's ScriptedLlm."""

        def reply(request: LlmRequest) -> LlmResponse:
            return LlmResponse.text(self(request.contents[-1].parts[0].text or ""))  # type: ignore[index]

        return ScriptedLlm([reply] * calls, model=JUDGE)


class GoogleAdkJudge(AdkBaseLlm):
    """The current :class:`JudgeScript` as a google-adk model."""

    script: ClassVar[JudgeScript | None] = None

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"oracle-judge-.*"]

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        assert GoogleAdkJudge.script is not None
        prompt = llm_request.contents[-1].parts[0].text or ""  # type: ignore[index]
        text = GoogleAdkJudge.script(prompt)
        yield AdkLlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


LLMRegistry.register(GoogleAdkJudge)

# google-adk's registry of these (metric_evaluator_registry) also imports its Vertex AI
# evaluators, which need pandas and Vertex's SDK; the classes it maps the names to are these.
GOOGLE_ADK_EVALUATORS: dict[str, Any] = {
    "tool_trajectory_avg_score": TrajectoryEvaluator,
    "response_match_score": RougeEvaluator,
    "final_response_match_v2": FinalResponseMatchV2Evaluator,
    "rubric_based_final_response_quality_v1": RubricBasedFinalResponseQualityV1Evaluator,
    "rubric_based_tool_use_quality_v1": RubricBasedToolUseV1Evaluator,
    "rubric_based_multi_turn_trajectory_quality_v1": RubricBasedMultiTurnTrajectoryEvaluator,
    "hallucinations_v1": HallucinationsV1Evaluator,
}


def _adk_invocation(turn: EvalInvocation) -> AdkInvocation:
    invocation = AdkInvocation.model_validate(turn.model_dump(mode="json", exclude_none=True))
    # google-adk's judges read tool declarations as genai Tool objects, as a run makes them
    for details in (
        invocation.app_details.agent_details if invocation.app_details else {}
    ).values():
        details.tool_declarations = [
            types.Tool.model_validate(t) for t in details.tool_declarations
        ]
    return invocation


def google_adk_scores(
    case: CaseResult, metric: str, criterion: Any, script: JudgeScript | None = None
) -> tuple[float | None, list[float | None]]:
    """google-adk's overall and per-turn scores of ``metric`` for the turns of ``case``."""
    GoogleAdkJudge.script = script
    config = AdkEvalConfig.model_validate({"criteria": {metric: criterion}})
    [eval_metric, *_] = get_eval_metrics_from_config(config)
    evaluator = GOOGLE_ADK_EVALUATORS[metric](eval_metric=eval_metric)
    actual = [_adk_invocation(t.actual) for t in case.turns if t.actual is not None]
    expected = [_adk_invocation(t.expected) for t in case.turns if t.expected is not None]
    outcome = evaluator.evaluate_invocations(actual, expected or None)
    result = asyncio.run(outcome) if asyncio.iscoroutine(outcome) else outcome
    return result.overall_score, [r.score for r in result.per_invocation_results]  # type: ignore[union-attr]


def adk_rx_scores(case: CaseResult, metric: str) -> tuple[float | None, list[float | None]]:
    """adk_rx's overall and per-turn scores of ``metric`` for ``case``."""
    [outcome] = [o for o in case.outcomes if o.name == metric]
    assert outcome.error is None, outcome.error
    assert outcome.result is not None
    return outcome.result.overall_score, [r.score for r in outcome.result.per_invocation]


def said(prompt: str, start: str, end: str) -> str:
    """The text of ``prompt`` between two markers ('' when they are not there)."""
    found = re.search(re.escape(start) + r"(.*?)" + re.escape(end), prompt, re.DOTALL)
    return found.group(1) if found else ""
