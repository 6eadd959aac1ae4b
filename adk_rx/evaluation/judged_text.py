"""The texts judges read from a turn, as google-adk 2.13 extracts them
(``llm_as_judge_utils``): the answer, optionally with what the agents said before it, the
tool calls with their responses, and the agents' tool declarations."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from adk_rx.evaluation.evalset import EvalInvocation
from adk_rx.evaluation.intermediate import (
    AppDetails,
    IntermediateData,
    InvocationEvents,
    calls_with_responses,
    content_text,
)

__all__ = ["answer_text", "tool_declarations_json", "tool_steps_json"]


def answer_text(turn: EvalInvocation, include_intermediate: bool = False) -> str | None:
    """The final answer's text; with ``include_intermediate``, the texts said on the way
    first, one per line."""
    if not include_intermediate:
        return content_text(turn.final_response)
    texts: list[str] = []
    data = turn.intermediate_data
    if isinstance(data, InvocationEvents):
        texts = [t for e in data.invocation_events if (t := content_text(e.content))]
    elif isinstance(data, IntermediateData):
        texts = [
            t
            for _, parts in data.intermediate_responses
            if (t := content_text(types.Content(parts=parts)))
        ]
    final = content_text(turn.final_response)
    if final:
        texts.append(final)
    return "\n".join(texts) if texts else None


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def tool_steps_json(data: IntermediateData | InvocationEvents | None) -> str:
    """The calls and their responses as numbered steps (JSON), or a sentence when none."""
    pairs = calls_with_responses(data)
    if not pairs:
        return "No intermediate steps were taken."
    steps = []
    for step, (call, response) in enumerate(pairs):
        steps.append(
            {
                "step": step,
                "tool_call": _dump(call),
                "tool_response": _dump(response) if response is not None else "None",
            }
        )
    return json.dumps({"tool_calls_and_response": steps}, indent=2)


def tool_declarations_json(app: AppDetails) -> str:
    """Each agent's tool declarations, by agent name (JSON)."""
    declared = {name: _dump(d.tool_declarations) for name, d in app.agent_details.items()}
    return json.dumps({"tool_declarations": declared}, indent=2)
