"""Folding a Claude message stream into partial responses and one complete response.

Claude streams a message as numbered content blocks::

    message_start         the model, the input usage
    content_block_start   index i: a text, thinking, redacted_thinking or tool_use block
    content_block_delta   index i: text_delta | thinking_delta | signature_delta | input_json_delta
    content_block_stop    index i
    message_delta         stop_reason, the output usage
    message_stop

Text and thinking deltas become ``partial=True`` responses as they arrive. A tool call's
input arrives as JSON fragments (``input_json_delta``), possibly for several calls at once;
each call is put back together from its fragments and appears whole, in block order, in the
final response, as do thinking blocks with their signatures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from google.genai import types

from adk_rx.models.aggregation import finish_error
from adk_rx.models.anthropic_messages import (
    finish_reason_from_anthropic,
    part_from_block,
    usage_from_anthropic,
)
from adk_rx.models.llm_response import LlmResponse, model_content
from adk_rx.models.openai_messages import invalid_response

__all__ = ["ClaudeStream"]

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens_details",
)


@dataclass
class _Block:
    """One content block being streamed."""

    kind: str
    start: Any
    pieces: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)


class ClaudeStream:
    """What a stream has said so far; :meth:`complete` builds the final response."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._model: str | None = None

    def add(self, event: Any) -> LlmResponse | None:
        """Takes one stream event (an SDK object); returns a partial response for new text."""
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self._model = event.message.model
            self._take_usage(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            self._blocks[event.index] = _Block(kind=block.type, start=block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason or self._stop_reason
            self._take_usage(event.usage)
        return None

    def _take_usage(self, usage: Any) -> None:
        for name in _USAGE_FIELDS:
            value = getattr(usage, name, None)
            if value is not None:
                self._usage[name] = value

    def _delta(self, index: int, delta: Any) -> LlmResponse | None:
        block = self._blocks.get(index)
        if block is None:
            raise invalid_response(self.provider, f"a delta for block {index}, never started")
        kind = delta.type
        if kind == "text_delta":
            block.pieces.append(delta.text)
            return _partial(types.Part(text=delta.text))
        if kind == "thinking_delta":
            block.pieces.append(delta.thinking)
            return _partial(types.Part(text=delta.thinking, thought=True))
        if kind == "signature_delta":
            block.signature.append(delta.signature)
        elif kind == "input_json_delta":
            block.pieces.append(delta.partial_json)
        return None

    def complete(self) -> LlmResponse:
        """The aggregated response: every block in order, tool inputs parsed."""
        parts = [p for i in sorted(self._blocks) if (p := self._part(self._blocks[i])) is not None]
        usage, custom = usage_from_anthropic(SimpleNamespace(**self._usage))
        reason = finish_reason_from_anthropic(self._stop_reason)
        error = finish_error(reason, None)
        return LlmResponse(
            content=model_content(*parts) if parts else None,
            partial=False,
            turn_complete=True,
            finish_reason=reason,
            usage_metadata=usage,
            custom_metadata=custom,
            model_version=self._model,
            error_code=error[0] if error else None,
            error_message=error[1] if error else None,
        )

    def _part(self, block: _Block) -> types.Part | None:
        start = block.start
        text = "".join(block.pieces)
        if block.kind == "text":
            return types.Part(text=(start.text or "") + text)
        if block.kind == "thinking":
            signature = "".join([start.signature or "", *block.signature])
            return types.Part(
                text=(start.thinking or "") + text,
                thought=True,
                thought_signature=signature.encode() if signature else None,
            )
        if block.kind == "tool_use":
            return types.Part(
                function_call=types.FunctionCall(
                    id=start.id, name=start.name, args=self._arguments(start.name, text)
                )
            )
        return part_from_block(start)  # complete at start (redacted thinking) or not ours

    def _arguments(self, name: str, text: str) -> dict[str, Any]:
        if not text.strip():
            return {}
        try:
            args = json.loads(text)
        except ValueError:
            raise invalid_response(
                self.provider, f"tool call {name!r} has input that is not JSON: {text[:200]!r}"
            ) from None
        if not isinstance(args, dict):
            raise invalid_response(self.provider, f"tool call {name!r} input is not an object")
        return args


def _partial(part: types.Part) -> LlmResponse:
    return LlmResponse(content=model_content(part), partial=True)
