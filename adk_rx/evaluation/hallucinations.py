"""``hallucinations_v1``: is each sentence of the answer backed by what the agent saw?
(google-adk 2.13's ``HallucinationsV1Evaluator``)

Per answer, two judge calls: the first splits the answer into ``<sentence>`` elements, the
second labels each sentence against a context (the agents' instructions, the user's message,
the tool declarations, and the tool calls, outputs and texts before the answer):
``supported`` and ``not_applicable`` count 1, ``unsupported``, ``contradictory`` and
``disputed`` 0. An answer's score is the mean of its labels; a turn's the mean over its
answers (the final one, and with ``evaluate_intermediate_nl_responses`` every text said on
the way, each judged against what came before it); the case's the mean over the turns that
got a score. A failed or unreadable judge call leaves that answer unscored. No sampling:
google-adk calls this judge once per answer, whatever ``num_samples`` says.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.evaluation.criteria import HallucinationsCriterion
from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import InvocationEvent, InvocationEvents, content_text
from adk_rx.evaluation.judge import ask_judge, resolve_judge
from adk_rx.evaluation.judged_text import tool_declarations_json
from adk_rx.evaluation.metric_result import (
    EvaluationResult,
    PerInvocationResult,
    check_lengths,
    status_of,
)
from adk_rx.evaluation.prompts.hallucinations import SEGMENTER_PROMPT, VALIDATOR_PROMPT
from adk_rx.evaluation.scenario import ConversationScenario
from adk_rx.models.base import BaseLlm

__all__ = ["HallucinationsEvaluator", "parse_labels", "parse_sentences"]

_SENTENCE = re.compile(r"<sentence>(.*?)</sentence>", re.DOTALL)
_BLOCK = re.compile(
    r"sentence:(.*?)\nlabel:(.*?)\nrationale:(.*?)\nsupporting_excerpt:(.*?)"
    r"\ncontradicting_excerpt:(.*?)(?=\nsentence:|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_POSITIVE = frozenset({"supported", "not_applicable"})
_NEGATIVE = frozenset({"unsupported", "contradictory", "disputed"})


def parse_sentences(answer: str) -> list[str]:
    """The segmenter's sentences."""
    return _SENTENCE.findall(answer)


def parse_labels(answer: str) -> list[float]:
    """The validator's labels as 1 (supported, not applicable) or 0; other labels are skipped."""
    scores = []
    for block in _BLOCK.finditer(answer.strip()):
        label = block.group(2).strip().lower()
        if label in _POSITIVE:
            scores.append(1.0)
        elif label in _NEGATIVE:
            scores.append(0.0)
    return scores


class HallucinationsEvaluator:
    """Scores ``hallucinations_v1`` for one criterion."""

    def __init__(self, criterion: HallucinationsCriterion) -> None:
        self.criterion = criterion

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """Segments and checks every answer of every turn, one turn after another."""

        def start(_: Any) -> Observable[EvaluationResult]:
            check_lengths(actual, expected)
            wanted = list(expected) if expected is not None else [None] * len(actual)
            llm = resolve_judge(self.criterion.judge_model_options)
            return rx.from_iterable(zip(actual, wanted, strict=True)).pipe(
                ops.concat_map(lambda pair: self._turn(llm, *pair)),
                ops.to_list(),
                ops.map(self._overall),
            )

        return rx.defer(start)

    def _turn(
        self, llm: BaseLlm, actual: EvalInvocation, expected: EvalInvocation | None
    ) -> Observable[PerInvocationResult]:
        steps = self._steps(actual)
        threshold = self.criterion.threshold
        if not steps:
            return rx.just(PerInvocationResult(actual, expected, rubric_scores=[]))

        def scored(scores: list[float | None]) -> PerInvocationResult:
            found = [s for s in scores if s is not None]
            score = statistics.mean(found) if found else None
            return PerInvocationResult(actual, expected, score, status_of(score, threshold), [])

        return rx.from_iterable(steps).pipe(
            ops.concat_map(lambda step: self._answer(llm, *step)), ops.to_list(), ops.map(scored)
        )

    def _answer(self, llm: BaseLlm, text: str, context: str) -> Observable[float | None]:
        options = self.criterion.judge_model_options

        def validate(sentences: list[str]) -> Observable[float | None]:
            if not sentences:
                return rx.just(None)
            listed = "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
            prompt = VALIDATOR_PROMPT.format(context=context, sentences=listed)
            return ask_judge(llm, options, prompt).pipe(ops.map(_mean_label))

        return ask_judge(llm, options, SEGMENTER_PROMPT.format(response=text)).pipe(
            ops.map(lambda r: parse_sentences(content_text(r.content) or "")),
            ops.flat_map(validate),
            ops.catch(lambda _, __: rx.just(None)),
        )

    def _steps(self, turn: EvalInvocation) -> list[tuple[str, str]]:
        data = turn.intermediate_data
        events = list(data.invocation_events) if isinstance(data, InvocationEvents) else []
        steps: list[tuple[str, str]] = []
        before: list[InvocationEvent] = []
        if self.criterion.evaluate_intermediate_nl_responses:
            for event in events:
                parts = event.content.parts if event.content else None
                texts = [p.text for p in parts or [] if p.text]
                context = _context(turn, before) if texts else ""
                steps += [(text, context) for text in texts]
                before.append(event)
        else:
            before = events
        final = content_text(turn.final_response)
        if final:
            steps.append((final, _context(turn, before)))
        return steps

    def _overall(self, results: list[PerInvocationResult]) -> EvaluationResult:
        scores = [r.score for r in results if r.score is not None]
        if not scores:
            return EvaluationResult(per_invocation=results)
        overall = statistics.mean(scores)
        return EvaluationResult(overall, status_of(overall, self.criterion.threshold), results)


def _mean_label(response: Any) -> float | None:
    text = content_text(response.content)
    scores = parse_labels(text) if text is not None else []
    return statistics.mean(scores) if scores else None


def _context(turn: EvalInvocation, events: list[InvocationEvent]) -> str:
    instructions, declarations = "", "Agent has no tools."
    app = turn.app_details
    if app is not None:
        instructions = "\n\n".join(
            f"{name}:\n{d.instructions}" for name, d in app.agent_details.items() if d.instructions
        )
        declarations = tool_declarations_json(app)
    parts = [
        f"Developer instructions:\n{instructions}\n",
        f"User prompt:\n{content_text(turn.user_content)}\n",
        "Tool definitions:",
        f"{declarations}\n",
        "Grounding metadata:",
        "No grounding metadata was provided.\n",
    ]
    for event in events:
        found = event.content.parts if event.content else None
        if not found:
            continue
        calls = [p.function_call for p in found if p.function_call]
        outputs = [p.function_response for p in found if p.function_response]
        texts = [p.text for p in found if p.text]
        if texts:
            parts.append("\n".join(texts) + "\n")
        if calls:
            dumped = [c.model_dump(exclude_none=True) for c in calls]
            parts += ["tool_calls:", json.dumps(dumped, indent=2) + "\n"]
        if outputs:
            dumped = [r.model_dump(exclude_none=True) for r in outputs]
            parts += ["tool_outputs:", json.dumps(dumped, indent=2) + "\n"]
    return "\n".join(parts)
