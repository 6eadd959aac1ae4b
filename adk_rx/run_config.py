"""RunConfig: per-invocation settings (streaming, tool execution, budgets, deadlines)."""

from __future__ import annotations

import enum
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from adk_rx.errors import ConfigurationError

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
        auto_create_session: create a missing session instead of failing.
        save_input_blobs_as_artifacts: store inline data of the user message as artifacts.
        timeout: seconds before the invocation is cancelled with InvocationTimeoutError.
        tool_timeout: seconds one tool call may take; then the model gets
            ``{"error": "timeout"}`` and the run goes on.
        custom_metadata: free-form data for plugins and callbacks.
        response_modalities: what a live model answers with (``["TEXT"]``, ``["AUDIO"]``).
        speech_config: the voice of a live model's audio answers.
        input_audio_transcription: ask a live model to transcribe what it hears.
        output_audio_transcription: ask a live model to transcribe what it says.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    tool_execution_mode: ToolExecutionMode = ToolExecutionMode.NONE
    max_llm_calls: int = 500
    auto_create_session: bool = False
    save_input_blobs_as_artifacts: bool = False
    timeout: float | None = Field(default=None, gt=0)
    tool_timeout: float | None = Field(default=None, gt=0)
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    response_modalities: list[str] | None = None
    speech_config: types.SpeechConfig | None = None
    input_audio_transcription: types.AudioTranscriptionConfig | None = None
    output_audio_transcription: types.AudioTranscriptionConfig | None = None

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

    @field_validator("max_llm_calls")
    @classmethod
    def _not_max_int(cls, value: int) -> int:
        if value >= 2**31 - 1:
            raise ValueError("max_llm_calls must be below 2**31 - 1; use 0 for unlimited")
        return value
