"""The three rubric-based metrics of google-adk 2.13, each one prompt over the shared judging
of :mod:`adk_rx.evaluation.rubrics`:

* ``rubric_based_final_response_quality_v1``: the final answer against the rubrics, with the
  agent's instructions, tools and tool calls as the evidence;
* ``rubric_based_tool_use_quality_v1``: the tool calls against the rubrics;
* ``rubric_based_multi_turn_trajectory_quality_v1``: the whole conversation, judged once on
  its last turn (the earlier turns are NOT_EVALUATED, as in google-adk).

Grounding metadata is not recorded by adk_rx's turns, so the final-response prompt always says
none was provided.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import InvocationEvents, content_text
from adk_rx.evaluation.judged_text import answer_text, tool_declarations_json, tool_steps_json
from adk_rx.evaluation.metric_result import (
    EvaluationResult,
    PerInvocationResult,
    check_lengths,
)
from adk_rx.evaluation.prompts import rubric_final_response, rubric_multi_turn, rubric_tool_use
from adk_rx.evaluation.rubrics import RubricBasedEvaluator
from adk_rx.evaluation.scenario import ConversationScenario

__all__ = [
    "MultiTurnTrajectoryRubricEvaluator",
    "RubricFinalResponseEvaluator",
    "RubricToolUseEvaluator",
]

_NO_TOOLS = "Agent has no tools."


class RubricFinalResponseEvaluator(RubricBasedEvaluator):
    """``rubric_based_final_response_quality_v1``."""

    rubric_type = "FINAL_RESPONSE_QUALITY"

    def prompt_for(self, actual: EvalInvocation, expected: EvalInvocation | None) -> str:
        """The rubrics, the user's message, the tool steps and the final answer."""
        instructions, declarations = "", _NO_TOOLS
        app = actual.app_details
        if app is not None:
            data = actual.intermediate_data
            agent = None
            if isinstance(data, InvocationEvents) and data.invocation_events:
                agent = data.invocation_events[0].author
            elif app.agent_details:
                agent = next(iter(app.agent_details))
            if agent:
                instructions = app.instructions_of(agent)
            declarations = tool_declarations_json(app)
        return rubric_final_response.PROMPT.format(
            developer_instructions=instructions,
            tool_declarations=declarations,
            user_input=content_text(actual.user_content),
            response_steps=tool_steps_json(actual.intermediate_data),
            grounding_metadata="No grounding metadata was provided.",
            final_response=answer_text(actual, self.include_intermediate) or "",
            rubrics=self.rubric_lines(actual),
        )


class RubricToolUseEvaluator(RubricBasedEvaluator):
    """``rubric_based_tool_use_quality_v1``."""

    rubric_type = "TOOL_USE_QUALITY"

    def prompt_for(self, actual: EvalInvocation, expected: EvalInvocation | None) -> str:
        """The rubrics, the tools, the user's message and the tool calls."""
        app = actual.app_details
        return rubric_tool_use.PROMPT.format(
            tool_declarations=tool_declarations_json(app) if app is not None else _NO_TOOLS,
            user_input=content_text(actual.user_content),
            tool_usage=tool_steps_json(actual.intermediate_data),
            rubrics=self.rubric_lines(actual),
        )


class MultiTurnTrajectoryRubricEvaluator(RubricBasedEvaluator):
    """``rubric_based_multi_turn_trajectory_quality_v1``: one judgement of the conversation."""

    rubric_type = "TRAJECTORY_QUALITY"
    _history: tuple[str, str, str] = ("", "", "")

    def evaluate_invocations(
        self,
        actual: Sequence[EvalInvocation],
        expected: Sequence[EvalInvocation] | None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> Observable[EvaluationResult]:
        """Judges the last turn with the whole dialogue in the prompt."""

        def start(_: Any) -> Observable[EvaluationResult]:
            check_lengths(actual, expected)
            if not actual:
                return rx.just(EvaluationResult())
            wanted = list(expected) if expected is not None else [None] * len(actual)
            judge = _LastTurn(self, _history(actual))
            earlier = [
                PerInvocationResult(a, e) for a, e in zip(actual[:-1], wanted[:-1], strict=True)
            ]
            last_expected = [wanted[-1]] if wanted[-1] is not None else None
            return RubricBasedEvaluator.evaluate_invocations(
                judge, [actual[-1]], last_expected
            ).pipe(ops.map(lambda last: _with_earlier(earlier, last, actual[-1], wanted[-1])))

        return rx.defer(start)

    def prompt_for(self, actual: EvalInvocation, expected: EvalInvocation | None) -> str:
        """The dialogue so far, the agents' instructions and tools, and the rubrics."""
        dialogue, instructions, tools = self._history
        rubrics = []
        for rubric in self.rubrics_for(actual):
            entry = {"id": rubric.rubric_id, "property": rubric.rubric_content.text_property}
            if rubric.type:
                entry["type"] = rubric.type
            rubrics.append(entry)
        return rubric_multi_turn.PROMPT.format(
            user_agent_dialogue=dialogue,
            properties=json.dumps(rubrics, indent=2),
            agent_instructions=instructions,
            agent_tool_definitions=tools,
        )


class _LastTurn(MultiTurnTrajectoryRubricEvaluator):
    """The judge of one run, holding that run's dialogue."""

    def __init__(self, metric: MultiTurnTrajectoryRubricEvaluator, history: Any) -> None:
        super().__init__(metric.criterion)  # type: ignore[arg-type]
        self._history = history


def _with_earlier(
    earlier: list[PerInvocationResult],
    last: EvaluationResult,
    actual: EvalInvocation,
    expected: EvalInvocation | None,
) -> EvaluationResult:
    final = last.per_invocation or [
        PerInvocationResult(
            actual, expected, last.overall_score, last.overall_status, last.overall_rubric_scores
        )
    ]
    return EvaluationResult(
        last.overall_score, last.overall_status, [*earlier, *final], last.overall_rubric_scores
    )


def _history(turns: Sequence[EvalInvocation]) -> tuple[str, str, str]:
    lines: list[str] = []
    for number, turn in enumerate(turns, 1):
        user = [p.text for p in turn.user_content.parts or [] if p.text]
        if user:
            lines.append(f"USER TURN {number}: {' '.join(user)}")
        data = turn.intermediate_data
        events = data.invocation_events if isinstance(data, InvocationEvents) else []
        for event in events:
            role = "USER" if event.author.lower() == "user" else f"AGENT ({event.author})"
            parts = event.content.parts if event.content else None
            texts = [p.text for p in parts or [] if p.text]
            if texts:
                lines.append(f"{role} TURN {number}: {' '.join(texts)}")
            for p in parts or []:
                if p.function_call:
                    args = json.dumps(dict(p.function_call.args)) if p.function_call.args else "{}"
                    lines.append(
                        f"{role} TURN {number} (tool call): {p.function_call.name}({args})"
                    )
                if p.function_response:
                    body = p.function_response.response
                    out = json.dumps(dict(body)) if body else "{}"
                    name = p.function_response.name
                    lines.append(f"{role} TURN {number} (tool output): {name} -> {out}")
        final = turn.final_response
        if final and final.parts:
            agent = events[0].author if events else "agent"
            texts = [p.text for p in final.parts if p.text]
            if texts:
                lines.append(f"AGENT ({agent}) TURN {number}: {' '.join(texts)}")
    instructions: list[str] = []
    tools: list[str] = []
    for turn in turns:
        for name, details in (turn.app_details.agent_details if turn.app_details else {}).items():
            instructions.append(f"Agent {name} Instructions:\n{details.instructions}")
            tools.append(f"Agent: {name}")
            for tool in details.tool_declarations:
                for fn in _declarations(tool):
                    tools.append(f"- {_get(fn, 'name')}: {_get(fn, 'description')}")
    return (
        "\n".join(lines),
        "\n\n".join(dict.fromkeys(instructions)),
        "\n".join(dict.fromkeys(tools)),
    )


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)


def _declarations(tool: Any) -> list[Any]:
    return list(_get(tool, "function_declarations") or [])
