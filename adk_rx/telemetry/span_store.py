"""SpanStore: the finished spans of recent invocations, kept in memory for dev tools.

A span processor for the OpenTelemetry SDK (the ``otel`` extra): add it to a
``TracerProvider`` and read the spans back by invocation, by session or by trace. It holds at
most ``max_traces`` traces (the oldest trace is dropped first) and ``max_spans_per_trace``
spans in each, so a long-running server stays bounded. ``adk-rx web`` and ``adk-rx
api-server`` keep one (``create_app(span_store=...)``; routes read it from the server), and
``adk-rx run --trace`` prints each turn from one.

    store = SpanStore()
    provider = TracerProvider(); provider.add_span_processor(store)
    runner = Runner(..., tracer_provider=provider)
    ...
    store.spans_of_invocation(invocation_id)   # the invocation span and everything under it
    store.spans_of_session(session_id)         # every kept span of the session's traces
    [span_to_dict(s) for s in spans]           # JSON-ready, google-adk's /debug/trace shape
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from adk_rx.telemetry import attributes as attr

__all__ = ["SpanStore", "span_to_dict"]


class SpanStore(SpanProcessor):
    """Keeps finished spans of recent traces, indexed by invocation and session id.

    Args:
        max_traces: traces kept; the oldest is dropped first.
        max_spans_per_trace: spans kept per trace; later spans of a full trace are dropped.
    """

    def __init__(self, max_traces: int = 256, max_spans_per_trace: int = 4096) -> None:
        self.max_traces = max_traces
        self.max_spans_per_trace = max_spans_per_trace
        self._lock = threading.Lock()
        self._traces: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._invocations: dict[str, tuple[int, int]] = {}  # id -> (trace id, span id)
        self._sessions: dict[str, list[int]] = {}  # session id -> trace ids, oldest first
        # trace id -> the invocation and session ids indexed for it, so dropping a trace
        # touches only its own entries (not every invocation kept, once per new trace).
        self._indexed: dict[int, tuple[set[str], set[str]]] = {}

    # -- SpanProcessor --------------------------------------------------------------------
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do until the span ends."""

    def on_end(self, span: ReadableSpan) -> None:
        """Keeps the span (and indexes an ``invocation`` span)."""
        context = span.context
        if context is None:
            return
        trace_id = context.trace_id
        attributes = span.attributes or {}
        with self._lock:
            spans = self._traces.get(trace_id)
            if spans is None:
                spans = self._traces[trace_id] = []
                while len(self._traces) > self.max_traces:
                    self._forget(self._traces.popitem(last=False)[0])
            if len(spans) < self.max_spans_per_trace:
                spans.append(span)
            if span.name == "invocation":
                invocation_id = attributes.get(attr.INVOCATION_ID)
                if isinstance(invocation_id, str):
                    self._invocations[invocation_id] = (trace_id, context.span_id)
                    self._index(trace_id)[0].add(invocation_id)
            session_id = attributes.get(attr.CONVERSATION_ID)
            if isinstance(session_id, str):
                traces = self._sessions.setdefault(session_id, [])
                if trace_id not in traces:
                    traces.append(trace_id)
                    self._index(trace_id)[1].add(session_id)

    def shutdown(self) -> None:
        """Forgets every span."""
        with self._lock:
            self._traces.clear()
            self._invocations.clear()
            self._sessions.clear()
            self._indexed.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered."""
        return True

    def _index(self, trace_id: int) -> tuple[set[str], set[str]]:
        found = self._indexed.get(trace_id)
        if found is None:
            found = self._indexed[trace_id] = (set(), set())
        return found

    def _forget(self, trace_id: int) -> None:
        invocations, sessions = self._indexed.pop(trace_id, ((), ()))
        for invocation_id in invocations:
            if self._invocations.get(invocation_id, (None,))[0] == trace_id:
                del self._invocations[invocation_id]
        for session_id in sessions:
            traces = [t for t in self._sessions.get(session_id, ()) if t != trace_id]
            if traces:
                self._sessions[session_id] = traces
            else:
                self._sessions.pop(session_id, None)

    # -- reading --------------------------------------------------------------------------
    def spans_of_invocation(self, invocation_id: str) -> list[ReadableSpan]:
        """The ``invocation`` span of that id and every kept span under it, by start time.

        Empty when the invocation is unknown, or still running (its span ends last).
        """
        with self._lock:
            found = self._invocations.get(invocation_id)
            if found is None:
                return []
            trace_id, root = found
            spans = list(self._traces.get(trace_id, ()))
        children: dict[int, list[ReadableSpan]] = {}
        by_id: dict[int, ReadableSpan] = {}
        for span in spans:
            if span.context is None:
                continue
            by_id[span.context.span_id] = span
            if span.parent is not None:
                children.setdefault(span.parent.span_id, []).append(span)
        out: list[ReadableSpan] = []
        pending = [root]
        while pending:
            span_id = pending.pop()
            span = by_id.get(span_id)
            if span is not None:
                out.append(span)
            pending.extend(c.context.span_id for c in children.get(span_id, ()) if c.context)
        return sorted(out, key=lambda s: s.start_time or 0)

    def spans_of_session(self, session_id: str) -> list[ReadableSpan]:
        """Every kept span of the traces the session's invocations ran in, by start time."""
        with self._lock:
            traces = list(self._sessions.get(session_id, ()))
            spans = [s for t in traces for s in self._traces.get(t, ())]
        return sorted(spans, key=lambda s: s.start_time or 0)

    def spans_of_trace(self, trace_id: int) -> list[ReadableSpan]:
        """Every kept span of one trace, by start time."""
        with self._lock:
            spans = list(self._traces.get(trace_id, ()))
        return sorted(spans, key=lambda s: s.start_time or 0)


def span_to_dict(span: ReadableSpan) -> dict[str, Any]:
    """A span as JSON-ready data: name, ids (hex), times (ns), attributes, status, events."""
    context = span.context
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}" if context else None,
        "span_id": f"{context.span_id:016x}" if context else None,
        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "events": [
            {"name": e.name, "timestamp": e.timestamp, "attributes": dict(e.attributes or {})}
            for e in span.events
        ],
    }
