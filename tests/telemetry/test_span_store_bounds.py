"""SpanStore drops its oldest trace with that trace's index entries, and only those."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider

from adk_rx.telemetry import attributes as attr
from adk_rx.telemetry.span_store import SpanStore


def _run(provider: TracerProvider, invocation: str, session: str) -> None:
    tracer = provider.get_tracer("test")
    attributes = {attr.INVOCATION_ID: invocation, attr.CONVERSATION_ID: session}
    with (
        tracer.start_as_current_span("invocation", attributes=attributes),
        tracer.start_as_current_span("call_llm", attributes=attributes),
    ):
        pass


def test_a_dropped_trace_takes_its_invocation_and_session_entries_with_it():
    store = SpanStore(max_traces=2)
    provider = TracerProvider()
    provider.add_span_processor(store)
    _run(provider, "i1", "s1")
    _run(provider, "i2", "s1")
    _run(provider, "i3", "s2")  # the third trace drops the first
    assert store.spans_of_invocation("i1") == []
    assert [s.name for s in store.spans_of_invocation("i2")] == ["invocation", "call_llm"]
    assert len(store.spans_of_session("s1")) == 2  # i2's trace only
    _run(provider, "i4", "s3")  # drops i2's trace: s1 has none left
    assert store.spans_of_session("s1") == []
    assert [s.name for s in store.spans_of_invocation("i3")] == ["invocation", "call_llm"]
    assert len(store.spans_of_session("s3")) == 2
    provider.shutdown()
