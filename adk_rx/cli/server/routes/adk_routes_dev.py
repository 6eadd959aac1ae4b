"""google-adk's developer routes under ``/dev/apps/{app}``: agent graph, traces, and the
builder its UI asks for.

* ``build_graph``: the agent tree (see :mod:`.agent_graph`), with the app's README.md;
  ``build_graph_image?dark_mode=&node=`` and ``graph``: Graphviz DOT source;
  ``users/{user}/sessions/{sid}/events/{event_id}/graph``: the same with the event's author,
  the tools it called and the workflow node it comes from highlighted;
* ``debug/trace/session/{sid}``: the session's spans: the OpenTelemetry spans the server
  keeps (see :mod:`adk_rx.cli.server.traces.span_view`), and spans derived from events
  (see :mod:`adk_rx.cli.server.traces.trace_view`) for runs it holds none of;
  ``debug/trace/{event_id}``: the attributes of the model-call span of that event (404 when
  unknown);
* ``builder`` answers an empty text (adk_rx apps are Python, there is no YAML to edit);
  the eval routes live in :mod:`.eval_routes`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.agents.base import BaseAgent

from ..edge.validation import check_id
from ..shared import json_response, not_found, runner_for, server_of, user_path
from ..traces.span_view import covered_invocations, store_spans
from ..traces.trace_index import TraceIndex
from ..traces.trace_view import session_spans
from .agent_graph import app_graph, dot_source
from .session_routes import find_session

__all__ = ["routes"]


def _index(request: Request) -> TraceIndex:
    return request.app.state.trace_index


def _caller(request: Request) -> str | None:
    return request.scope.get("state", {}).get("user")


def _find_agent(root: BaseAgent, path: str) -> BaseAgent | None:
    agent = root
    for name in (part for part in path.split("/") if part):
        if name == agent.name:
            continue
        agent = next((sub for sub in agent.sub_agents if sub.name == name), None)
        if agent is None:
            return None
    return agent


async def build_graph(request: Request) -> Response:
    name = request.path_params["app"]
    runner = await runner_for(request, name)
    readme_path = server_of(request).runners.agents_dir / name / "README.md"
    readme = await asyncio.to_thread(
        lambda: readme_path.read_text(encoding="utf-8") if readme_path.is_file() else None
    )
    return json_response(app_graph(name, runner.agent, readme))


def _dark(request: Request) -> bool:
    return request.query_params.get("dark_mode", "").lower() in ("true", "1")


async def build_graph_image(request: Request) -> Response:
    runner = await runner_for(request, request.path_params["app"])
    node = request.query_params.get("node") or ""
    agent = _find_agent(runner.agent, node) if node else runner.agent
    if agent is None:
        raise not_found(f"node {node!r}")
    return json_response({node: {"dotSrc": dot_source(agent, dark_mode=_dark(request))}})


async def graph(request: Request) -> Response:
    runner = await runner_for(request, request.path_params["app"])
    return json_response({"dotSrc": dot_source(runner.agent, dark_mode=_dark(request))})


async def event_graph(request: Request) -> Response:
    """The agent graph with the event's author and its calls highlighted; ``{}`` for no event."""
    params = request.path_params
    app_name, user, sid = params["app"], params["user"], params["sid"]
    user_path(request, user)
    runner = await runner_for(request, app_name)
    session = await find_session(request, app_name, user, sid)
    event = next((e for e in session.events if e.id == params["event_id"]), None)
    if event is None:
        return json_response({})
    names = {event.author}
    if event.node_info is not None and event.node_info.path:  # the workflow node it comes from
        names.add(event.node_info.path.rsplit("/", 1)[-1].split("@", 1)[0])
    names |= {c.name or "" for c in event.get_function_calls()}
    names |= {r.name or "" for r in event.get_function_responses()}
    dot = dot_source(runner.agent, dark_mode=_dark(request), highlight=frozenset(names))
    return json_response({"dotSrc": dot})


async def _spans(request: Request, app_name: str, user: str, sid: str) -> list[dict[str, Any]]:
    """The server's spans of the session's runs, and spans from events for the other runs."""
    session = await find_session(request, app_name, user, sid)
    store = server_of(request).span_store
    spans = store_spans(store, app_name, sid, session.events) if store is not None else []
    spans += session_spans(sid, session.events, skip=covered_invocations(spans))
    return sorted(spans, key=lambda span: span["start_time"] or 0)


async def session_trace(request: Request) -> Response:
    app_name = check_id(request.path_params["app"], "the app name")
    sid = check_id(request.path_params["sid"], "the session id")
    user = _index(request).session_user(app_name, sid, _caller(request))
    if user is None:
        return json_response([])
    try:
        return json_response(await _spans(request, app_name, user, sid))
    except HTTPException as exc:
        if exc.status_code == 404:  # deleted since: nothing to show
            return json_response([])
        raise


async def event_trace(request: Request) -> Response:
    app_name = check_id(request.path_params["app"], "the app name")
    event_id = check_id(request.path_params["event_id"], "the event id")
    owner = _index(request).event_owner(app_name, event_id, _caller(request))
    if owner is None:
        raise HTTPException(404, "Trace not found")
    for span in await _spans(request, app_name, owner[0], owner[1]):
        attributes = span["attributes"]
        if attributes.get("gcp.vertex.agent.event_id") == event_id:
            return json_response(
                {**attributes, "trace_id": span["trace_id"], "span_id": span["span_id"]}
            )
    raise HTTPException(404, "Trace not found")


async def builder(request: Request) -> Response:
    await runner_for(request, request.path_params["app"])
    return Response("", media_type="text/plain")


_DEV = "/dev/apps/{app}"
routes = [
    Route(_DEV + "/build_graph", build_graph, methods=["GET"]),
    Route(_DEV + "/build_graph_image", build_graph_image, methods=["GET"]),
    Route(_DEV + "/graph", graph, methods=["GET"]),
    Route(
        _DEV + "/users/{user}/sessions/{sid}/events/{event_id}/graph", event_graph, methods=["GET"]
    ),
    Route(_DEV + "/debug/trace/session/{sid}", session_trace, methods=["GET"]),
    Route(_DEV + "/debug/trace/{event_id}", event_trace, methods=["GET"]),
    Route(_DEV + "/builder", builder, methods=["GET"]),
]
