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
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx.watched import watched
from adk_rx.telemetry import attributes as attr
from adk_rx.telemetry.span_watchers import ModelSpan, SpanWatcher, ToolSpan

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.context import InvocationContext
    from adk_rx.flows.tool_call import Call
    from adk_rx.models.llm_request import LlmRequest
    from adk_rx.models.llm_response import LlmResponse
    from adk_rx.pricing import Pricing
    from adk_rx.telemetry.metrics import Instruments

__all__ = ["InvocationTrace", "TraceScope"]


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
        "pricing",
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
        self.pricing: Pricing | None = None  # the run's, set when the invocation opens
        self._started = 0.0 if instruments is None else time.perf_counter()
        self._lock = threading.Lock()
        self._ended = False

    def opened(self, ctx: InvocationContext) -> TraceScope:
        """The invocation has its id and root context; returns the root agent's scope."""
        self.base = {attr.CONVERSATION_ID: ctx.session.id, attr.INVOCATION_ID: ctx.invocation_id}
        self.pricing = ctx.run_config.pricing
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
        run = watched(lambda: build(ctx), lambda: SpanWatcher(self.invocation, span, context))
        return sync.forward(run, observer, scheduler)

    def call_llm(
        self,
        agent: BaseAgent,
        request: LlmRequest,
        generate: Callable[[], Observable[LlmResponse]],
    ) -> Observable[LlmResponse]:
        """``generate()``'s responses inside a ``call_llm`` span (usage, finish reason, metrics)."""
        invocation = self.invocation

        def watcher() -> ModelSpan:
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
            context = trace.set_span_in_context(span, self.context)
            return ModelSpan(invocation, span, context, model or "")

        return watched(generate, watcher)

    def execute_tool(self, item: Call, run: Callable[[], Observable[Any]]) -> Observable[Any]:
        """``run()`` (callbacks and the tool) inside an ``execute_tool {name}`` span."""
        invocation = self.invocation

        def watcher() -> ToolSpan:
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
            tool_span = ToolSpan(invocation, span, trace.set_span_in_context(span, self.context))
            item.span = tool_span
            return tool_span

        return watched(run, watcher)
