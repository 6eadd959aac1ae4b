"""RunConfig: per-invocation settings (streaming, tool execution, budgets, deadlines)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from adk_rx.errors import ConfigurationError
from adk_rx.pricing import Pricing

if TYPE_CHECKING:
    from adk_rx.budget import Budget

__all__ = ["RunConfig", "StreamingMode", "ToolExecutionMode"]


class StreamingMode(enum.Enum):
    """How the model's output reaches the subscriber."""

    NONE = "none"
    """One complete response per model call."""
    SSE = "sse"
    """Partial events as the model streams (never persisted), then the aggregate."""
    BIDI = "bidi"
    """Live, bidirectional streaming: ``Runner.run_live``; ``run_async`` runs it like SSE."""


class ToolExecutionMode(enum.Enum):
    """How the function calls of one model response run."""

    NONE = "none"
    """The default: same as PARALLEL."""
    SEQUENTIAL = "sequential"
    """One after another, in call order."""
    PARALLEL = "parallel"
    """All at once; blocking tools run on the I/O scheduler, so they overlap too."""


class RunConfig(BaseModel):
    """Settings of one invocation. Immutable; ``model_copy(update=...)`` to vary.

    Attributes:
        streaming_mode: NONE (default), SSE or BIDI.
        tool_execution_mode: NONE (= PARALLEL), SEQUENTIAL or PARALLEL.
        max_llm_calls: model calls allowed per invocation; 0 or less means unlimited.
        max_tool_calls: tool runs allowed per invocation; None means unlimited.
        max_tokens: prompt + candidate tokens the invocation's model responses may report
            in total; once reached, no further model call or tool run starts.
        max_cost: what the invocation's tokens may cost (priced by ``pricing``); once
            reached, no further model call or tool run starts.
        pricing: the prices of models' tokens (``adk_rx.usage.Pricing``); needed by
            ``max_cost``.
        dedupe_tool_calls: answer a repeated call of an ``idempotent`` tool (same name and
            arguments, same invocation) from the earlier response instead of running it.
        auto_create_session: create a missing session instead of failing.
        save_input_blobs_as_artifacts: store inline data of the user message as artifacts.
        timeout: seconds before the invocation is cancelled with InvocationTimeoutError.
        tool_timeout: seconds one tool call may take (a tool's own ``timeout`` wins); then
            the model gets an error naming the tool and the run goes on.
        custom_metadata: free-form data for plugins and callbacks.
        response_modalities: what a live model answers with (``["TEXT"]``, ``["AUDIO"]``).
        speech_config: the voice of a live model's audio answers.
        input_audio_transcription: ask a live model to transcribe what it hears.
        output_audio_transcription: ask a live model to transcribe what it says.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    streaming_mode: StreamingMode = StreamingMode.NONE
    tool_execution_mode: ToolExecutionMode = ToolExecutionMode.NONE
    max_llm_calls: int = 500
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost: float | None = Field(default=None, ge=0)
    pricing: Pricing | None = None
    dedupe_tool_calls: bool = False
    auto_create_session: bool = False
    save_input_blobs_as_artifacts: bool = False
    timeout: float | None = Field(default=None, gt=0)
    tool_timeout: float | None = Field(default=None, gt=0)
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    response_modalities: list[str] | None = None
    speech_config: types.SpeechConfig | None = None
    input_audio_transcription: types.AudioTranscriptionConfig | None = None
    output_audio_transcription: types.AudioTranscriptionConfig | None = None
    # An AgentTool's child run spends its caller's budget: the caller's Budget rides here.
    _shared_budget: Budget | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Validates the settings.

        Raises:
            ConfigurationError: a setting has the wrong type or value (the message lists
                each one; the pydantic error is the ``__cause__``).
        """
        try:
            super().__init__(**data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'RunConfig'}: {error['msg']}"
                for error in exc.errors()
            )
            raise ConfigurationError(f"invalid RunConfig: {problems}") from exc

    @model_validator(mode="after")
    def _cost_needs_prices(self) -> RunConfig:
        if self.max_cost is not None and self.pricing is None:
            raise ValueError("max_cost needs pricing=Pricing({...}) to price the tokens")
        return self

    @field_validator("max_llm_calls")
    @classmethod
    def _not_max_int(cls, value: int) -> int:
        if value >= 2**31 - 1:
            raise ValueError("max_llm_calls must be below 2**31 - 1; use 0 for unlimited")
        return value
