"""Spans of one invocation: ``invocation`` > ``invoke_agent {name}`` > ``call_llm`` /
``execute_tool {name}``.

An :class:`InvocationTrace` is made when a Runner's invocation is subscribed (its span's
parent is the caller's current OpenTelemetry context then). Each context of the invocation
carries a :class:`TraceScope` (``InvocationContext.trace``): the span its agent runs in. The
runtime asks the scope to run an agent, a model call or a tool call inside a new child span;
the child is the *current* span while the work is subscribed, and adk_rx's schedulers copy
the current context to the thread or loop that runs it, so a user's spans nest under it.

A span ends exactly once: when its stream completes (OK), errors (ERROR, exception recorded)
or is disposed (``adk_rx.error_code`` = ``CANCELLED`` or, after a deadline, ``TIMEOUT``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.telemetry import attributes as attr

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.context import InvocationContext
    from adk_rx.flows.tool_call import Call
    from adk_rx.models.llm_request import LlmRequest
    from adk_rx.models.llm_response import LlmResponse
    from adk_rx.telemetry.metrics import Instruments

__all__ = ["InvocationTrace", "ToolSpan", "TraceScope"]


class InvocationTrace:
    """The ``invocation`` span of one run, and what its child spans share."""

    __slots__ = (
        "_ended",
        "_lock",
        "_started",
        "app_name",
        "base",
        "capture",
        "context",
        "instruments",
        "span",
        "stop_code",
        "telemetry",
        "tracer",
    )

    def __init__(
        self,
        tracer: Tracer,
        instruments: Instruments | None,
        capture: bool,
        *,
        app_name: str,
        session_id: str,
        telemetry: Any = None,
    ) -> None:
        self.telemetry = telemetry  # the Runner's Telemetry (an AgentTool's inner run shares it)
        self.tracer = tracer
        self.instruments = instruments
        self.capture = capture
        self.app_name = app_name
        self.base: dict[str, Any] = {attr.CONVERSATION_ID: session_id}
        parent = otel_context.get_current()
        self.span = tracer.start_span(
            "invocation",
            context=parent,
            attributes={attr.CONVERSATION_ID: session_id, attr.APP_NAME: app_name},
        )
        self.context = trace.set_span_in_context(self.span, parent)
        self.stop_code: str | None = None
        self._started = 0.0 if instruments is None else time.perf_counter()
        self._lock = threading.Lock()
        self._ended = False

    def opened(self, ctx: InvocationContext) -> TraceScope:
        """The invocation has its id and root context; returns the root agent's scope."""
        self.base = {attr.CONVERSATION_ID: ctx.session.id, attr.INVOCATION_ID: ctx.invocation_id}
        self.span.set_attribute(attr.INVOCATION_ID, ctx.invocation_id)
        return TraceScope(self, self.context)

    def stopping(self, code: str) -> None:
        """A disposal (``CANCELLED``) or deadline (``TIMEOUT``) is about to stop the body."""
        self.stop_code = code

    def end(self, outcome: str, error: BaseException | None = None) -> None:
        """Ends the span: ``outcome`` is ``ok``, ``error``, ``cancelled`` or ``timeout``."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        span = self.span
        if outcome == "error" and error is not None:
            span.record_exception(error)
            span.set_attribute(attr.ERROR_TYPE, type(error).__qualname__)
            span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__name__))
        elif outcome in ("cancelled", "timeout"):
            span.set_attribute(attr.ERROR_CODE, outcome.upper())
            if outcome == "timeout":
                span.set_status(Status(StatusCode.ERROR, "invocation deadline exceeded"))
        span.end()
        if self.instruments is not None:
            self.instruments.invocation(
                time.perf_counter() - self._started, outcome, {attr.APP_NAME: self.app_name}
            )


class TraceScope:
    """The span an agent runs in; starts child spans for agents, model calls and tools."""

    __slots__ = ("context", "invocation")

    def __init__(self, invocation: InvocationTrace, context: Context) -> None:
        self.invocation = invocation
        self.context = context

    def _start(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> Span:
        """A child span; ``attributes`` already hold the invocation's shared ones."""
        return self.invocation.tracer.start_span(
            name, context=self.context, kind=kind, attributes=attributes
        )

    def run_agent(
        self,
        agent: BaseAgent,
        ctx: InvocationContext,
        build: Callable[[InvocationContext], Observable[Any]],
        observer: abc.ObserverBase[Any],
        scheduler: abc.SchedulerBase | None,
    ) -> abc.DisposableBase:
        """Subscribes ``build(ctx)`` inside an ``invoke_agent`` span; ``ctx`` gets its scope."""
        attributes: dict[str, Any] = {
            **self.invocation.base,
            attr.OPERATION: "invoke_agent",
            attr.AGENT_NAME: agent.name,
        }
        if agent.description:
            attributes[attr.AGENT_DESCRIPTION] = agent.description
        if ctx.branch:
            attributes[attr.BRANCH] = ctx.branch
        span = self._start(f"invoke_agent {agent.name}", SpanKind.INTERNAL, attributes)
        context = trace.set_span_in_context(span, self.context)
        ctx.trace = TraceScope(self.invocation, context)
        run = _SpanRun(self.invocation, span, observer)
        return run.subscribe(context, lambda: build(ctx), scheduler)

    def call_llm(
        self,
        agent: BaseAgent,
        request: LlmRequest,
        generate: Callable[[], Observable[LlmResponse]],
    ) -> Observable[LlmResponse]:
        """``generate()``'s responses inside a ``call_llm`` span (usage, finish reason, metrics)."""
        invocation = self.invocation

        def subscribe(
            observer: abc.ObserverBase[LlmResponse], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            model = request.model or getattr(getattr(agent, "canonical_model", None), "model", "")
            attributes: dict[str, Any] = {
                **invocation.base,
                attr.OPERATION: "generate_content",
                attr.AGENT_NAME: agent.name,
                attr.REQUEST_MODEL: model or "",
            }
            if invocation.capture:
                attributes[attr.INPUT_MESSAGES] = attr.contents_json(request.contents)
                system = request.config.system_instruction if request.config else None
                if system:
                    attributes[attr.SYSTEM_INSTRUCTIONS] = attr.value_json(str(system))
            span = self._start("call_llm", SpanKind.CLIENT, attributes)
            model_run = _ModelRun(invocation, span, observer, model or "")
            return model_run.subscribe(
                trace.set_span_in_context(span, self.context), generate, scheduler
            )

        return Observable(subscribe)

    def execute_tool(self, item: Call, run: Callable[[], Observable[Any]]) -> Observable[Any]:
        """``run()`` (callbacks and the tool) inside an ``execute_tool {name}`` span."""
        invocation = self.invocation

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            name = item.call.name or ""
            attributes: dict[str, Any] = {
                **invocation.base,
                attr.OPERATION: "execute_tool",
                attr.TOOL_NAME: name,
                attr.TOOL_TYPE: "function",
            }
            if item.call.id:
                attributes[attr.TOOL_CALL_ID] = item.call.id
            if item.tool is not None and item.tool.description:
                attributes[attr.TOOL_DESCRIPTION] = item.tool.description
            if invocation.capture:
                attributes[attr.TOOL_CALL_ARGUMENTS] = attr.value_json(item.args)
            span = self._start(f"execute_tool {name}", SpanKind.INTERNAL, attributes)
            tool_run = ToolSpan(invocation, span, observer)
            item.span = tool_run
            return tool_run.subscribe(trace.set_span_in_context(span, self.context), run, scheduler)

        return Observable(subscribe)


class _SpanRun(abc.ObserverBase[Any], abc.DisposableBase):
    """One span over one subscription: current while subscribing, ended exactly once.

    It is the source's observer and the subscriber's handle at once (no wrapper layers):
    items pass through while the span is open; the first of completion, error and disposal
    closes it, later items are dropped, and the source is released once it terminated.
    """

    __slots__ = ("_lock", "_open", "invocation", "observer", "span", "subscription")

    def __init__(
        self, invocation: InvocationTrace, span: Span, observer: abc.ObserverBase[Any]
    ) -> None:
        self.invocation = invocation
        self.span = span
        self.observer = observer
        self.subscription: abc.DisposableBase | None = None
        self._lock = threading.Lock()
        self._open = True

    def subscribe(
        self,
        context: Context,
        build: Callable[[], Observable[Any]],
        scheduler: abc.SchedulerBase | None,
    ) -> abc.DisposableBase:
        token = otel_context.attach(context)
        try:
            try:
                inner = build()._subscribe_core(self, scheduler)  # pyright: ignore[reportPrivateUsage]
            except Exception as exc:
                self.on_error(exc)
                return self
        finally:
            otel_context.detach(token)
        if inner is None:  # a subscribe function may return nothing, or a bare callable
            return self
        if not hasattr(inner, "dispose"):
            inner = Disposable(cast("Callable[[], None]", inner))
        if not self._open:
            inner.dispose()  # terminated (or disposed) while subscribing: release it now
        else:
            self.subscription = inner
            if not self._open:  # terminated on another thread in between
                self._release()
        return self

    @property
    def is_stopped(self) -> bool:
        """Producers that poll ``observer.is_stopped`` see the span closed."""
        return not self._open

    def _close(self) -> bool:
        with self._lock:
            if not self._open:
                return False
            self._open = False
            return True

    def _release(self) -> None:
        subscription, self.subscription = self.subscription, None
        if subscription is not None:
            subscription.dispose()

    def finish(self) -> None:
        """Attributes known at the end (subclasses)."""

    def on_next(self, value: Any) -> None:
        if self._open:
            self.observer.on_next(value)

    def on_completed(self) -> None:
        with self._lock:  # _close(), inlined on this path (once per span)
            if not self._open:
                return
            self._open = False
        self.finish()
        self.span.end()
        try:
            self.observer.on_completed()
        finally:
            subscription = self.subscription
            if subscription is not None:  # _release(), inlined: usually nothing to release
                self.subscription = None
                subscription.dispose()

    def on_error(self, error: Exception) -> None:
        if not self._close():
            return
        self.failed(error)
        self.finish()
        self.span.end()
        try:
            self.observer.on_error(error)
        finally:
            self._release()

    def failed(self, error: BaseException) -> None:
        span = self.span
        span.record_exception(error)
        span.set_attribute(attr.ERROR_TYPE, type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__name__))

    def dispose(self) -> None:
        if not self._open or not self._close():
            return  # ended already: the source was released when it terminated
        self._release()
        code = self.invocation.stop_code or "CANCELLED"
        self.span.set_attribute(attr.ERROR_CODE, code)
        if code == "TIMEOUT":
            self.span.set_status(Status(StatusCode.ERROR, "invocation deadline exceeded"))
        self.finish()
        self.span.end()


class _ModelRun(_SpanRun):
    __slots__ = ("_error_type", "_input", "_model", "_output", "_reasons", "_reply", "_started")

    def __init__(
        self,
        invocation: InvocationTrace,
        span: Span,
        observer: abc.ObserverBase[LlmResponse],
        model: str,
    ) -> None:
        super().__init__(invocation, span, observer)
        self._model = model
        self._started = 0.0 if invocation.instruments is None else time.perf_counter()
        self._input: int | None = None
        self._output: int | None = None
        self._reasons: list[str] = []
        self._reply: Any = None
        self._error_type: str | None = None

    def on_next(self, value: LlmResponse) -> None:
        if not self._open:
            return
        response = value
        if not response.partial:
            usage = response.usage_metadata
            if usage is not None:
                self._input = usage.prompt_token_count
                self._output = usage.candidates_token_count
            reason = response.finish_reason
            if reason is not None:
                self._reasons.append(str(getattr(reason, "value", reason)))
            if response.content is not None:
                self._reply = response.content
        self.observer.on_next(response)

    def failed(self, error: BaseException) -> None:
        super().failed(error)
        self._error_type = type(error).__qualname__

    def finish(self) -> None:
        span = self.span
        if self._input is not None:
            span.set_attribute(attr.INPUT_TOKENS, self._input)
        if self._output is not None:
            span.set_attribute(attr.OUTPUT_TOKENS, self._output)
        if self._reasons:
            span.set_attribute(attr.RESPONSE_FINISH_REASONS, self._reasons)
        if self.invocation.capture and self._reply is not None:
            span.set_attribute(attr.OUTPUT_MESSAGES, attr.contents_json(self._reply))
        instruments = self.invocation.instruments
        if instruments is not None:
            instruments.model_call(
                time.perf_counter() - self._started,
                self._model,
                self._input,
                self._output,
                self._error_type,
            )


class ToolSpan(_SpanRun):
    """The span of one tool call; the call path reports a tool's exception through it."""

    __slots__ = ()

    def on_next(self, value: Any) -> None:
        if not self._open:
            return
        response = value
        if self.invocation.capture:
            self.span.set_attribute(attr.TOOL_CALL_RESULT, attr.value_json(response))
        self.observer.on_next(response)

    def tool_failed(self, error: BaseException) -> None:
        """The tool raised (or timed out); the model still gets an error response."""
        with self._lock:
            if not self._open:
                return
        self.failed(error)
