"""LlmResponse: one response (or streamed chunk) of a model call."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

__all__ = ["LlmResponse"]


@dataclass(frozen=True, slots=True)
class LlmResponse:
    """What a model returns for one call, or one chunk of a streamed call.

    A streamed call emits ``partial=True`` chunks first and then one complete response that
    aggregates them. A response carrying ``error_code`` (a safety block, a non-STOP finish)
    is a normal response: it becomes an event, not an error.

    Attributes:
        content: the model's content (role ``"model"``).
        partial: a streamed chunk; the aggregate follows.
        turn_complete: the model finished its turn.
        error_code, error_message: the provider reports an error for this response.
        finish_reason: why generation stopped (a ``types.FinishReason`` value).
        usage_metadata: token counts.
        interrupted: the turn was interrupted (live mode).
        input_transcription: what the model heard the user say (live audio).
        output_transcription: the text of the model's spoken answer (live audio).
        custom_metadata: free-form data passed through to the event.
        model_version: the model version the provider reports.
        grounding_metadata: the sources a grounded answer (e.g. Google Search) rests on.
        citation_metadata: the sources the answer quotes.
        avg_logprobs: the mean log probability of the answer's tokens.
        logprobs_result: the log probability of each token (and its top alternatives).
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True
    )

    content: types.Content | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    error_code: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    interrupted: bool | None = None
    input_transcription: types.Transcription | None = None
    output_transcription: types.Transcription | None = None
    custom_metadata: Mapping[str, Any] | None = None
    model_version: str | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    citation_metadata: types.CitationMetadata | None = None
    avg_logprobs: float | None = None
    logprobs_result: types.LogprobsResult | None = None

    def replace(self, **changes: Any) -> LlmResponse:
        """Returns a copy with the given fields changed."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def text(cls, text: str, **fields: Any) -> LlmResponse:
        """A complete model reply holding one text part."""
        return cls(content=model_content(types.Part(text=text)), **fields)

    def get_text(self) -> str:
        """The concatenated non-thought text of the content."""
        if self.content is None or not self.content.parts:
            return ""
        return "".join(p.text for p in self.content.parts if p.text and not p.thought)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible dict (camelCase keys, None left out)."""
        return _ADAPTER.dump_python(self, mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LlmResponse:
        """Builds a response from :meth:`to_dict` output."""
        return _ADAPTER.validate_python(dict(data))


def model_content(*parts: types.Part) -> types.Content:
    """A ``role="model"`` content holding ``parts``."""
    return types.Content(role="model", parts=list(parts))


_ADAPTER: pydantic.TypeAdapter[LlmResponse] = pydantic.TypeAdapter(LlmResponse)
