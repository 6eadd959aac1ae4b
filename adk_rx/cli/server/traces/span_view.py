"""The server's OpenTelemetry spans in google-adk's trace-pane shape.

When the server keeps spans (a :class:`~adk_rx.telemetry.span_store.SpanStore`), the trace
routes answer them, turned into ``{name, start_time, end_time, trace_id, span_id,
parent_span_id, attributes, logs}``. google-adk's UI needs two attributes adk_rx's spans
name differently or do not carry: ``gcp.vertex.agent.invocation_id`` (from
``adk_rx.invocation_id``) and, on model-call spans, ``gcp.vertex.agent.event_id``: the
session event that call produced, found by order (the n-th ``call_llm`` span of an
invocation made the n-th model event of it). That event's content is added as
``gcp.vertex.agent.llm_response`` when the span has no recorded output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from adk_rx.events import Event

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

    from adk_rx.telemetry.span_store import SpanStore

__all__ = ["covered_invocations", "store_spans"]

INVOCATION_ID = "adk_rx.invocation_id"
APP_NAME = "adk_rx.app_name"
EVENT_ID = "gcp.vertex.agent.event_id"
ADK_INVOCATION_ID = "gcp.vertex.agent.invocation_id"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"


def _is_model_event(event: Event) -> bool:
    if event.author == "user" or event.partial:
        return False
    return bool(event.error_code) or (
        event.content is not None and not event.get_function_responses()
    )


def _model_events(events: Iterable[Event]) -> dict[str, list[Event]]:
    found: dict[str, list[Event]] = {}
    for event in events:
        if _is_model_event(event):
            found.setdefault(event.invocation_id, []).append(event)
    return found


def _web_ui_span(span: ReadableSpan, event: Event | None) -> dict[str, Any]:
    attributes: dict[str, Any] = dict(span.attributes or {})
    invocation_id = attributes.get(INVOCATION_ID)
    if isinstance(invocation_id, str):
        attributes[ADK_INVOCATION_ID] = invocation_id
    if span.name == "call_llm":
        attributes[EVENT_ID] = event.id if event is not None else ""
        if event is not None and event.content is not None and LLM_RESPONSE not in attributes:
            content = event.content.model_dump_json(by_alias=True, exclude_none=True)
            attributes[LLM_RESPONSE] = content
    context, parent = span.context, span.parent
    return {
        "name": span.name,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "trace_id": context.trace_id if context else 0,
        "span_id": context.span_id if context else 0,
        "parent_span_id": parent.span_id if parent is not None else None,
        "attributes": attributes,
        "logs": [],
    }


def store_spans(
    store: SpanStore, app_name: str, session_id: str, events: list[Event]
) -> list[dict[str, Any]]:
    """The kept spans of the session's runs of ``app_name``, by start time."""
    spans = store.spans_of_session(session_id)
    apps = {
        s.context.trace_id: (s.attributes or {}).get(APP_NAME)
        for s in spans
        if s.name == "invocation" and s.context is not None
    }
    mine = [s for s in spans if s.context is not None and apps.get(s.context.trace_id) == app_name]
    model_events = _model_events(events)
    taken: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for span in mine:
        event = None
        invocation_id = (span.attributes or {}).get(INVOCATION_ID)
        if span.name == "call_llm" and isinstance(invocation_id, str):
            index = taken.get(invocation_id, 0)
            candidates = model_events.get(invocation_id, [])
            event = candidates[index] if index < len(candidates) else None
            taken[invocation_id] = index + 1
        out.append(_web_ui_span(span, event))
    return out


def covered_invocations(spans: Iterable[dict[str, Any]]) -> set[str]:
    """The invocation ids that have an ``invocation`` span among ``spans``."""
    return {
        s["attributes"][ADK_INVOCATION_ID]
        for s in spans
        if s["name"] == "invocation" and ADK_INVOCATION_ID in s["attributes"]
    }
