"""The spans of agent runs, model calls and tool calls, as watchers of their streams.

Each span watches one subscription through :func:`adk_rx.rx.watched`: its context is current
while the work is subscribed (so spans the work starts nest under it), it sees what passes
(a model's usage and finish reasons, a tool's result), and it ends exactly once: OK on
completion, ERROR with the exception recorded on an error, and ``adk_rx.error_code`` =
``CANCELLED`` (or ``TIMEOUT`` after a deadline) on a disposal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from adk_rx.rx.watched import Outcome, Watcher
from adk_rx.telemetry import attributes as attr

if TYPE_CHECKING:
    from adk_rx.models.llm_response import LlmResponse
    from adk_rx.telemetry.spans import InvocationTrace

__all__ = ["ModelSpan", "SpanWatcher", "ToolSpan"]

R = TypeVar("R")


class SpanWatcher(Watcher[Any]):
    """One span over one subscription: current while subscribing, ended exactly once.

    Args:
        invocation: the invocation's trace (its stop code, instruments, capture setting).
        span: the span, started.
        context: the OpenTelemetry context with the span current.
    """

    __slots__ = ("context", "ended_already", "invocation", "span")

    def __init__(self, invocation: InvocationTrace, span: Span, context: Context) -> None:
        self.invocation = invocation
        self.span = span
        self.context = context
        self.ended_already = False

    def subscribing(self, subscribe: Callable[[], R]) -> R:
        """Subscribes with the span current."""
        token = otel_context.attach(self.context)
        try:
            return subscribe()
        finally:
            otel_context.detach(token)

    def ended(self, outcome: Outcome, error: Exception | None) -> None:
        """Sets the span's status for the outcome and ends it."""
        self.ended_already = True
        span = self.span
        if error is not None:
            self.failed(error)
        elif outcome is Outcome.DISPOSED:
            code = self.invocation.stop_code or "CANCELLED"
            span.set_attribute(attr.ERROR_CODE, code)
            if code == "TIMEOUT":
                span.set_status(Status(StatusCode.ERROR, "invocation deadline exceeded"))
        self.finish()
        span.end()

    def failed(self, error: BaseException) -> None:
        """Records ``error`` on the span (ERROR status)."""
        span = self.span
        span.record_exception(error)
        span.set_attribute(attr.ERROR_TYPE, type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__name__))

    def finish(self) -> None:
        """Attributes known at the end (subclasses)."""


class ModelSpan(SpanWatcher):
    """A ``call_llm`` span: token usage, finish reasons, the reply, and the model metrics."""

    __slots__ = (
        "_error_type",
        "_input",
        "_model",
        "_output",
        "_reasons",
        "_reply",
        "_started",
        "_usage",
        "_version",
    )

    def __init__(
        self, invocation: InvocationTrace, span: Span, context: Context, model: str
    ) -> None:
        super().__init__(invocation, span, context)
        self._model = model
        self._started = 0.0 if invocation.instruments is None else time.perf_counter()
        self._input: int | None = None
        self._output: int | None = None
        self._reasons: list[str] = []
        self._reply: Any = None
        self._error_type: str | None = None
        self._usage: Any = None  # the complete response's usage metadata, for the cost
        self._version: str | None = None

    def item(self, value: LlmResponse) -> None:
        """Takes note of a complete response's usage, finish reason and content."""
        response = value
        if not response.partial:
            usage = response.usage_metadata
            if usage is not None:
                self._input = usage.prompt_token_count
                self._output = usage.candidates_token_count
                self._usage = usage
                self._version = response.model_version
            reason = response.finish_reason
            if reason is not None:
                self._reasons.append(str(getattr(reason, "value", reason)))
            if response.content is not None:
                self._reply = response.content

    def failed(self, error: BaseException) -> None:
        """Records ``error``, and its type for the metrics."""
        super().failed(error)
        self._error_type = type(error).__qualname__

    def finish(self) -> None:
        """Usage, finish reasons and (when captured) the reply; the model-call metrics."""
        span = self.span
        if self._input is not None:
            span.set_attribute(attr.INPUT_TOKENS, self._input)
        if self._output is not None:
            span.set_attribute(attr.OUTPUT_TOKENS, self._output)
        if self._reasons:
            span.set_attribute(attr.RESPONSE_FINISH_REASONS, self._reasons)
        if self.invocation.capture and self._reply is not None:
            span.set_attribute(attr.OUTPUT_MESSAGES, attr.contents_json(self._reply))
        pricing = self.invocation.pricing
        cost = None
        if pricing is not None and self._usage is not None:
            cost = pricing.cost(self._version or self._model, self._usage)
            span.set_attribute(attr.COST, cost)
        instruments = self.invocation.instruments
        if instruments is not None:
            instruments.model_call(
                time.perf_counter() - self._started,
                self._model,
                self._input,
                self._output,
                self._error_type,
                cost,
            )


class ToolSpan(SpanWatcher):
    """The span of one tool call; the call path reports a tool's exception through it."""

    __slots__ = ()

    def item(self, value: Any) -> None:
        """Records the tool's result when contents are captured."""
        if self.invocation.capture:
            self.span.set_attribute(attr.TOOL_CALL_RESULT, attr.value_json(value))

    def tool_failed(self, error: BaseException) -> None:
        """The tool raised (or timed out); the model still gets an error response."""
        if not self.ended_already:
            self.failed(error)
