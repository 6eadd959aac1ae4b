"""Trace spans derived from a session's stored events, in google-adk's dev UI shape.

For runs whose OpenTelemetry spans the server does not hold (no OpenTelemetry SDK, a run of
an earlier process, spans dropped from the bounded store; see :mod:`.span_view`), the trace
pane is fed from the events each run stored, which carry their timestamps::

    invocation                    user message ........................ last event
      invoke_agent {author}       first event of the agent ............ its last event
        call_llm                  previous event ...... model event (text or calls)
        execute_tool {name}       the call's event ............. its response's event

Each span is ``{name, start_time, end_time (ns), trace_id, span_id, parent_span_id,
attributes, logs}`` with the attributes the UI reads (``gen_ai.operation.name``,
``gen_ai.conversation.id``, ``gcp.vertex.agent.event_id``, ``gcp.vertex.agent.invocation_id``,
``gcp.vertex.agent.llm_response`` ...). Ids are stable hashes kept under 2**53, so the
browser reads them exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from adk_rx.events import Event

__all__ = ["session_spans"]

_SAFE = (1 << 53) - 1


def _id(*parts: str) -> int:
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") & _SAFE) or 1


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def _span(
    name: str,
    start: float,
    end: float,
    trace: int,
    parent: int | None,
    key: str,
    attributes: dict[str, Any],
) -> dict[str, Any]:
    return {
        "name": name,
        "start_time": _ns(start),
        "end_time": _ns(max(start, end)),
        "trace_id": trace,
        "span_id": _id(key),
        "parent_span_id": parent,
        "attributes": attributes,
        "logs": [],
    }


def _invocations(events: Iterable[Event]) -> dict[str, list[Event]]:
    grouped: dict[str, list[Event]] = {}
    for event in events:
        if event.invocation_id and not event.partial:
            grouped.setdefault(event.invocation_id, []).append(event)
    return grouped


def _common(session_id: str, invocation_id: str) -> dict[str, Any]:
    return {"gen_ai.conversation.id": session_id, "gcp.vertex.agent.invocation_id": invocation_id}


def _content_json(event: Event) -> str:
    content = event.content
    return content.model_dump_json(by_alias=True, exclude_none=True) if content else "{}"


def _invocation_spans(session_id: str, invocation_id: str, events: list[Event]) -> list[dict]:
    trace = _id("trace", invocation_id)
    common = _common(session_id, invocation_id)
    root = _span(
        "invocation",
        events[0].timestamp,
        events[-1].timestamp,
        trace,
        None,
        f"inv/{invocation_id}",
        dict(common),
    )
    spans = [root]
    agents: dict[str, dict[str, Any]] = {}
    calls: dict[str, Event] = {}
    previous = events[0]
    for event in events:
        if event.author == "user":
            previous = event
            continue
        agent = agents.get(event.author)
        if agent is None:
            attributes = {
                **common,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": event.author,
            }
            key = f"agent/{invocation_id}/{event.author}"
            agent = _span(
                f"invoke_agent {event.author}",
                previous.timestamp,
                event.timestamp,
                trace,
                root["span_id"],
                key,
                attributes,
            )
            agents[event.author] = agent
            spans.append(agent)
        agent["end_time"] = max(agent["end_time"], _ns(event.timestamp))
        for call in event.get_function_calls():
            calls[call.id or ""] = event
        responses = event.get_function_responses()
        if responses:
            for response in responses:
                called = calls.get(response.id or "", previous)
                spans.append(
                    _span(
                        f"execute_tool {response.name}",
                        called.timestamp,
                        event.timestamp,
                        trace,
                        agent["span_id"],
                        f"tool/{event.id}/{response.id}",
                        {
                            **common,
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": response.name or "",
                            "gen_ai.tool.call.id": response.id or "",
                            "gcp.vertex.agent.event_id": event.id,
                            "gcp.vertex.agent.tool_response": json.dumps(
                                response.response, default=str
                            ),
                        },
                    )
                )
        elif event.content is not None or event.error_code:
            spans.append(
                _span(
                    "call_llm",
                    previous.timestamp,
                    event.timestamp,
                    trace,
                    agent["span_id"],
                    f"llm/{event.id}",
                    {
                        **common,
                        "gen_ai.operation.name": "generate_content",
                        "gcp.vertex.agent.event_id": event.id,
                        "gcp.vertex.agent.llm_response": _content_json(event),
                    },
                )
            )
        previous = event
    root["end_time"] = max(root["end_time"], *(s["end_time"] for s in spans))
    return spans


def session_spans(
    session_id: str, events: Iterable[Event], skip: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Spans of every invocation of the session but those in ``skip``, oldest first."""
    skipped = set(skip)
    spans: list[dict[str, Any]] = []
    for invocation_id, found in _invocations(events).items():
        # A state patch or a stored user message alone ran nothing: no trace.
        if invocation_id not in skipped and any(e.author != "user" for e in found):
            spans += _invocation_spans(session_id, invocation_id, found)
    return spans
