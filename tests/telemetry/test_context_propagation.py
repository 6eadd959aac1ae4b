"""The current OpenTelemetry span (and any context variable) follows work across threads."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types
from opentelemetry import trace
from reactivex import Observable

from adk_rx import LlmAgent, ToolContext
from adk_rx.models import BaseLlm, LlmRequest, LlmResponse
from adk_rx.rx import from_blocking_iterable
from adk_rx.testing import ScriptedLlm
from tests.telemetry.support import Traces, turn
from tests.tool_harness import call, calls

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def traces() -> Traces:
    return Traces()


def _tool_agent(tool: Any) -> LlmAgent:
    return LlmAgent(
        name="root",
        model=ScriptedLlm([calls(call(tool.__name__)), "done"]),
        tools=[tool],
    )


def test_a_sync_tool_on_the_pool_runs_inside_its_execute_tool_span(traces: Traces) -> None:
    seen: dict[str, object] = {}

    def probe() -> str:
        """Reports where it runs."""
        seen["thread"] = threading.current_thread()
        seen["span"] = trace.get_current_span()
        with traces.provider.get_tracer("user").start_as_current_span("user work"):
            pass
        return "ok"

    runner = traces.runner(_tool_agent(probe))

    turn(runner)

    tool = traces.one("execute_tool probe")
    assert seen["thread"] is not threading.current_thread()
    span = seen["span"]
    assert isinstance(span, trace.Span)
    assert span.get_span_context().span_id == tool.context.span_id
    user = traces.one("user work")
    assert user.parent is not None and user.parent.span_id == tool.context.span_id


def test_an_async_tool_on_the_runtime_loop_runs_inside_its_execute_tool_span(
    traces: Traces,
) -> None:
    seen: dict[str, object] = {}

    async def probe() -> str:
        """Reports where it runs."""
        await asyncio.sleep(0)
        seen["loop"] = asyncio.get_running_loop()
        seen["span"] = trace.get_current_span()
        return "ok"

    runner = traces.runner(_tool_agent(probe))

    turn(runner)

    tool = traces.one("execute_tool probe")
    assert isinstance(seen["loop"], asyncio.AbstractEventLoop)
    span = seen["span"]
    assert isinstance(span, trace.Span)
    assert span.get_span_context().span_id == tool.context.span_id


class _ThreadedLlm(BaseLlm):
    """Streams its reply from a worker thread and records the current span there."""

    def __init__(self) -> None:
        super().__init__(model="threaded")
        self.spans: list[trace.Span] = []
        self.threads: list[threading.Thread] = []

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        def chunks() -> Iterator[LlmResponse]:
            self.threads.append(threading.current_thread())
            self.spans.append(trace.get_current_span())
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="hi")]))

        return from_blocking_iterable(chunks)


def test_a_model_stream_on_a_thread_runs_inside_its_call_llm_span(traces: Traces) -> None:
    llm = _ThreadedLlm()
    runner = traces.runner(LlmAgent(name="root", model=llm))

    turn(runner)

    model_span = traces.one("call_llm")
    assert llm.threads[0] is not threading.current_thread()
    assert llm.spans[0].get_span_context().span_id == model_span.context.span_id


_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


def test_a_context_variable_reaches_a_pool_tool_without_any_tracing() -> None:
    from adk_rx import InMemoryRunner

    seen: list[str] = []

    def probe(tool_context: ToolContext) -> str:
        """Reports the request id."""
        seen.append(_request_id.get())
        assert tool_context.invocation_context.trace is None  # nobody listens: no scope
        return "ok"

    runner = InMemoryRunner(agent=_tool_agent(probe), app_name="app")
    runner.session_service.create_session(app_name="app", user_id="u1", session_id="s1").run()
    token = _request_id.set("req-7")
    try:
        turn(runner)
    finally:
        _request_id.reset(token)

    assert seen == ["req-7"]
