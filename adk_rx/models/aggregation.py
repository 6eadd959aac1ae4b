"""Folding streamed chunks into the one complete response that ends a streamed call.

The seam's streaming protocol is: ``partial=True`` responses as chunks arrive, then exactly one
non-partial response holding the whole turn. ``StreamAggregator`` builds that last response:
consecutive text is merged into one part (thought text into its own part), other parts
(function calls, inline data) are kept in order, and the last usage, finish reason and model
version win. A finish other than STOP becomes ``error_code``/``error_message``, as for a
non-streamed response.
"""

from __future__ import annotations

from google.genai import types

from adk_rx.events import new_call_id
from adk_rx.models.copies import replaced
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.response_metadata import ResponseMetadata

__all__ = ["StreamAggregator", "ensure_function_call_ids", "finish_error"]


def ensure_function_call_ids(content: types.Content | None) -> types.Content | None:
    """``content`` with an id on every function call (a copy when one was missing)."""
    if content is None or not content.parts:
        return content
    for part in content.parts:  # (a loop: all() of a generator costs three calls)
        call = part.function_call
        if call is not None and not call.id:
            break
    else:
        return content
    parts: list[types.Part] = []
    for part in content.parts:
        call = part.function_call
        if call is not None and not call.id:
            call = replaced(call, id=new_call_id())
            part = replaced(part, function_call=call)
        parts.append(part)
    return replaced(content, parts=parts)


_OK_FINISHES = frozenset({None, "", "STOP", "FINISH_REASON_UNSPECIFIED"})


def finish_error(finish_reason: str | None, finish_message: str | None) -> tuple[str, str] | None:
    """``(error_code, error_message)`` for a finish reason that is not a normal stop."""
    if finish_reason in _OK_FINISHES:
        return None
    assert finish_reason is not None
    message = finish_message or f"the model stopped early: {finish_reason}"
    return finish_reason, message


class StreamAggregator:
    """Collects the parts of a streamed turn; :meth:`complete` returns the final response."""

    def __init__(self) -> None:
        self._parts: list[types.Part] = []
        self._text: list[str] = []
        self._text_is_thought = False
        self._text_signature: bytes | None = None
        self.usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.model_version: str | None = None
        self.metadata = ResponseMetadata()

    def add_part(self, part: types.Part) -> None:
        """Adds one streamed part: text is merged, anything else kept as is."""
        if part.text is not None and part.function_call is None:
            self.add_text(part.text, thought=bool(part.thought), signature=part.thought_signature)
            return
        self._flush_text()
        self._parts.append(part)

    def add_text(self, text: str, *, thought: bool = False, signature: bytes | None = None) -> None:
        """Adds a text fragment; a switch between thought and answer text starts a new part."""
        if self._text and thought != self._text_is_thought:
            self._flush_text()
        self._text_is_thought = thought
        self._text.append(text)
        if signature is not None:
            # Gemini signs the text part that ends a thought; the merged part must carry it.
            self._text_signature = signature

    def _flush_text(self) -> None:
        if not self._text:
            return
        joined = "".join(self._text)
        if joined or self._text_signature is not None:
            self._parts.append(
                types.Part(
                    text=joined,
                    thought=True if self._text_is_thought else None,
                    thought_signature=self._text_signature,
                )
            )
        self._text = []
        self._text_is_thought = False
        self._text_signature = None

    def complete(self, *, error: tuple[str, str] | None = None) -> LlmResponse:
        """The aggregated, non-partial response of the whole stream.

        Args:
            error: an ``(error_code, error_message)`` that overrides the finish reason's
                (e.g. a blocked prompt).
        """
        self._flush_text()
        content = types.Content(role="model", parts=list(self._parts)) if self._parts else None
        error = error or finish_error(self.finish_reason, self.finish_message)
        return LlmResponse(
            content=content,
            partial=False,
            turn_complete=True,
            finish_reason=self.finish_reason,
            usage_metadata=self.usage_metadata,
            model_version=self.model_version,
            error_code=error[0] if error else None,
            error_message=error[1] if error else None,
            **self.metadata.fields(),
        )
