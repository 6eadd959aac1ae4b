"""The trace of one invocation, for the dev page's trace view.

``GET /apps/{app}/users/{user}/sessions/{sid}/invocations/{iid}/trace`` answers
``{"source": "spans", "spans": [...]}`` from the server's span store (the invocation span and
everything under it, see :func:`~adk_rx.telemetry.span_store.span_to_dict`) or, when the
store has none (no OpenTelemetry SDK installed, a run from before the server started, a run
still going), ``{"source": "events", "events": [...]}``: the invocation's stored events with
their timestamps, so the page can still draw when each step happened.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.events import Event

from ..routes.session_routes import find_session, ids_of
from ..shared import json_response, not_found, server_of

__all__ = ["routes"]


def _event_row(event: Event) -> dict[str, Any]:
    calls = [c.name for c in event.get_function_calls()]
    answers = [r.name for r in event.get_function_responses()]
    usage = event.usage_metadata
    return {
        "id": event.id,
        "author": event.author,
        "timestamp": event.timestamp,
        "text": event.text()[:200] if event.content is not None else "",
        "function_calls": calls,
        "function_responses": answers,
        "error_code": event.error_code,
        "input_tokens": usage.prompt_token_count if usage is not None else None,
        "output_tokens": usage.candidates_token_count if usage is not None else None,
    }


async def invocation_trace(request: Request) -> Response:
    app_name, user = await ids_of(request)
    sid, iid = request.path_params["sid"], request.path_params["iid"]
    session = await find_session(request, app_name, user, sid)
    store = server_of(request).span_store
    if store is not None:
        from adk_rx.telemetry.span_store import span_to_dict

        spans = store.spans_of_invocation(iid)
        if spans and (spans[0].attributes or {}).get("gen_ai.conversation.id") == sid:
            return json_response({"source": "spans", "spans": [span_to_dict(s) for s in spans]})
    events = [e for e in session.events if e.invocation_id == iid]
    if not events:
        raise not_found(f"invocation {iid!r}")
    return json_response({"source": "events", "events": [_event_row(e) for e in events]})


routes = [
    Route(
        "/apps/{app}/users/{user}/sessions/{sid}/invocations/{iid}/trace",
        invocation_trace,
        methods=["GET"],
    )
]
