"""LLM-as-a-judge: ask a model about each turn ``num_samples`` times and combine the answers.

As google-adk 2.13's ``LlmAsJudge``: each turn gets one prompt (:meth:`LlmJudge.prompt_for`),
sent ``num_samples`` times, at most ``parallelism_limit`` requests at once; each answer is
parsed into a score (:meth:`LlmJudge.score_of`); a turn's samples are combined
(:meth:`LlmJudge.combine_samples`, a majority vote in the built-in judges) and the turns into
the case's score (:meth:`LlmJudge.combine_turns`). A turn one of whose samples failed (the
model errored) is NOT_EVALUATED, as in google-adk.

The judge is any :class:`~adk_rx.models.base.BaseLlm`: ``judge_model`` is a model, or a name
resolved through :class:`~adk_rx.models.registry.LlmRegistry` (``gemini-2.5-flash``,
``openai/...``, ``claude-...``, or a pattern the application registered).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.evaluation.criteria import BaseCriterion, JudgeModelOptions, RubricScore
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.metric_result import (
    EvaluationResult,
    PerInvocationResult,
    check_lengths,
    status_of,
)
from adk_rx.evaluation.scenario import ConversationScenario
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.registry import LlmRegistry

__all__ = ["AutoRaterScore", "LlmJudge", "ask_judge", "judge_config", "resolve_judge"]


@dataclass(frozen=True)
class AutoRaterScore:
    """What one judge answer says: a score (None: unreadable) and per-rubric verdicts."""

    score: float | None = None
    rubric_scores: list[RubricScore] | None = None


def resolve_judge(options: JudgeModelOptions) -> BaseLlm:
    """The judge model: the given one, or the registry's model for the name."""
    model = options.judge_model
    return model if isinstance(model, BaseLlm) else LlmRegistry.resolve(model)


def judge_config(options: JudgeModelOptions) -> types.GenerateContentConfig:
    """The judge's request config: the user's, with automatic function calling off (the
    judge gets no tools; google-adk turns it off the same way)."""
    config = (
        options.judge_model_config.model_copy(deep=True)
        if options.judge_model_config is not None
        else types.GenerateContentConfig()
    )
    config.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
    return config


def ask_judge(llm: BaseLlm, options: JudgeModelOptions, prompt: str) -> Observable[LlmResponse]:
    """One non-streamed judge call with ``prompt`` as the user's message (one response)."""
    request = LlmRequest(
        model=llm.model,
        contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        config=judge_config(options),
    )
    return llm.generate_content(request, stream=False).pipe(
        ops.filter(lambda response: not response.partial), ops.last()
    )


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]


class LlmJudge:
    """A metric scored by a judge model; subclasses say what to ask and how to read it."""

    expected_required = False

    def __init__(self, criterion: BaseCriterion, options: JudgeModelOptions) -> None:
        self.criterion = criterion
        self.options = options
        self.threshold = criterion.threshold

    def prompt_for(self, actual: EvalInvocation, expected: EvalInvocation | None) -> str:
        """The judge's prompt for one turn."""
        raise NotImplementedError

    def score_of(self, response: LlmResponse, actual: EvalInvocation) -> AutoRaterScore:
        """One answer of the judge, read."""
        raise NotImplementedError

    def combine_samples(self, samples: list[PerInvocationResult]) -> PerInvocationResult:
        """One turn's result from its samples."""
        raise NotImplementedError

    def combine_turns(self, results: list[PerInvocationResult]) -> EvaluationResult:
        """The case's result from its turns'."""
        raise NotImplementedError

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """Asks the judge about every turn and combines the answers (cold)."""
        return rx.defer(lambda _: self._judge_turns(list(actual), expected))

    def _judge_turns(
        self, actual: list[EvalInvocation], expected: Sequence[EvalInvocation] | None
    ) -> Observable[EvaluationResult]:
        if self.expected_required and expected is None:
            raise ValueError("this metric needs the expected turns")
        check_lengths(actual, expected)
        pairs = list(zip(actual, expected or [None] * len(actual), strict=True))
        if not pairs:
            return rx.just(EvaluationResult())
        llm = resolve_judge(self.options)
        asks = [
            (turn, self.prompt_for(got, want), got, want)
            for turn, (got, want) in enumerate(pairs)
            for _ in range(self.options.num_samples)
        ]
        return rx.from_iterable(enumerate(asks)).pipe(
            ops.map(
                lambda numbered: self._sample(llm, *numbered[1]).pipe(
                    ops.map(lambda sample, n=numbered[0]: (n, sample))
                )
            ),
            ops.merge(max_concurrent=self.options.parallelism_limit),
            ops.to_list(),
            # samples finish in any order; vote over them in the order they were asked
            ops.map(lambda done: self._combine(pairs, [s for _, s in sorted(done, key=_first)])),
        )

    def _sample(
        self,
        llm: BaseLlm,
        turn: int,
        prompt: str,
        actual: EvalInvocation,
        expected: EvalInvocation | None,
    ) -> Observable[tuple[int, PerInvocationResult | None]]:
        def read(response: LlmResponse) -> tuple[int, PerInvocationResult | None]:
            found = self.score_of(response, actual)
            status = status_of(found.score, self.threshold)
            return turn, PerInvocationResult(
                actual, expected, found.score, status, found.rubric_scores
            )

        def failed(_: Exception, __: Any) -> Observable[tuple[int, PerInvocationResult | None]]:
            return rx.just((turn, None))

        return ask_judge(llm, self.options, prompt).pipe(ops.map(read), ops.catch(failed))

    def _combine(
        self,
        pairs: list[tuple[EvalInvocation, EvalInvocation | None]],
        samples: list[tuple[int, PerInvocationResult | None]],
    ) -> EvaluationResult:
        results = []
        for turn, (got, want) in enumerate(pairs):
            mine = [sample for index, sample in samples if index == turn]
            if any(sample is None for sample in mine):
                results.append(PerInvocationResult(got, want))
            else:
                results.append(self.combine_samples([s for s in mine if s is not None]))
        return self.combine_turns(results)
