"""``/openapi.json`` and ``/docs``: an OpenAPI 3.1 description of every route of the server.

The paths come from the app's own route table, so a route is never left out; summaries,
tags and request bodies come from :data:`DESCRIPTIONS`, and a route missing there is
described by its handler's docstring. Request bodies are JSON schemas of pydantic models
(``new_message`` is google-genai's ``Content``). ``/docs`` is one self-contained page (no
script from elsewhere) listing the routes; ``/openapi.json`` is what API tools import.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pydantic
from google.genai import types
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route

from .adk_routes_service import adk_rx_version
from .shared import json_response

__all__ = ["DESCRIPTIONS", "routes", "spec"]


class RunRequest(pydantic.BaseModel):
    """The body of ``/run``, ``/run_sse`` and ``POST .../invocations`` (camelCase accepted)."""

    app_name: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    new_message: types.Content
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    invocation_id: str | None = None
    function_call_event_id: str | None = None


class CreateSessionRequest(pydantic.BaseModel):
    """``POST .../sessions``: optional id, initial state and seed events."""

    session_id: str | None = None
    state: dict[str, Any] | None = None
    events: list[dict[str, Any]] | None = None


class UpdateSessionRequest(pydantic.BaseModel):
    """``PATCH .../sessions/{sid}``."""

    stateDelta: dict[str, Any]


class SaveArtifactRequest(pydantic.BaseModel):
    """``POST .../artifacts``."""

    filename: str
    artifact: types.Part


_S = "/apps/{app}/users/{user}/sessions"
_I = _S + "/{sid}/invocations"
_A = _S + "/{sid}/artifacts"
_D = "/dev/apps/{app}"

# (method, path) -> (tag, summary, request body model)
DESCRIPTIONS: dict[tuple[str, str], tuple[str, str, type[pydantic.BaseModel] | None]] = {
    ("GET", "/list-apps"): ("apps", "App names; ?detailed=true: {apps: [AppInfo]}", None),
    ("GET", "/apps/{app}/app-info"): ("apps", "One app's info and its agents", None),
    ("GET", "/version"): ("service", "Server version and language", None),
    ("GET", "/health"): ("service", "Liveness", None),
    ("GET", "/config/telemetry"): ("service", "Usage telemetry setting (always off)", None),
    ("POST", "/config/telemetry"): ("service", "Accepted; adk_rx sends no telemetry", None),
    ("POST", _S): ("sessions", "Create a session (state, seed events)", CreateSessionRequest),
    ("GET", _S): ("sessions", "List the user's sessions (without events)", None),
    ("GET", _S + "/{sid}"): ("sessions", "A session with its events", None),
    ("POST", _S + "/{sid}"): ("sessions", "Create a session with this id; body = state", None),
    ("PATCH", _S + "/{sid}"): ("sessions", "Apply a state delta", UpdateSessionRequest),
    ("DELETE", _S + "/{sid}"): ("sessions", "Delete a session (200 null)", None),
    ("GET", _A): ("artifacts", "Artifact names of the session", None),
    ("POST", _A): ("artifacts", "Save a new artifact version", SaveArtifactRequest),
    ("GET", _A + "/{name}"): ("artifacts", "The latest version (or ?version=N)", None),
    ("DELETE", _A + "/{name}"): ("artifacts", "Delete every version", None),
    ("GET", _A + "/{name}/versions"): ("artifacts", "Version numbers", None),
    ("GET", _A + "/{name}/versions/metadata"): ("artifacts", "Every version's metadata", None),
    ("GET", _A + "/{name}/versions/{version}"): ("artifacts", "One version (or latest)", None),
    ("GET", _A + "/{name}/versions/{version}/metadata"): ("artifacts", "Its metadata", None),
    ("POST", "/run"): ("runs", "Run a turn; answers its events", RunRequest),
    ("POST", "/run_sse"): ("runs", "Run a turn; its events as SSE data frames", RunRequest),
    ("POST", _I): ("invocations", "Start a run the server owns (202)", RunRequest),
    ("GET", _I): ("invocations", "The session's invocations still held", None),
    ("GET", _I + "/{iid}"): ("invocations", "One invocation's status", None),
    ("GET", _I + "/{iid}/events"): (
        "invocations",
        "SSE of its events from ?after=CURSOR (or Last-Event-ID), then an end frame",
        None,
    ),
    ("POST", _I + "/{iid}:cancel"): ("invocations", "Cancel the run", None),
    ("GET", _D + "/build_graph"): ("dev", "The agent tree", None),
    ("GET", _D + "/build_graph_image"): ("dev", "The agent graph as DOT source", None),
    ("GET", _D + "/graph"): ("dev", "The agent graph as DOT source", None),
    ("GET", _D + "/users/{user}/sessions/{sid}/events/{event_id}/graph"): (
        "dev",
        "The agent graph with an event's author and calls highlighted",
        None,
    ),
    ("PATCH", "/apps/{app}/users/{user}/memory"): ("sessions", "Add a session to memory", None),
    ("GET", _D + "/debug/trace/session/{sid}"): ("dev", "The session's trace spans", None),
    ("GET", _D + "/debug/trace/{event_id}"): ("dev", "An event's model-call span", None),
    ("GET", _D + "/builder"): ("dev", "Agent YAML (none: adk_rx apps are Python)", None),
    ("GET", _D + "/eval_sets"): ("evals", "Eval set ids of the app", None),
    ("GET", _D + "/eval-sets"): ("evals", "Eval set ids of the app ({eval_set_ids})", None),
    ("POST", _D + "/eval-sets"): ("evals", "Create an eval set ({eval_set: {eval_set_id}})", None),
    ("POST", _D + "/eval_sets/{eval_set_id}"): ("evals", "Create an empty eval set", None),
    ("POST", _D + "/eval_sets/{eval_set_id}/add_session"): (
        "evals",
        "Add a stored session as a case ({eval_id, session_id, user_id})",
        None,
    ),
    ("POST", _D + "/eval-sets/{eval_set_id}/add-session"): (
        "evals",
        "Add a stored session as a case ({eval_id, session_id, user_id})",
        None,
    ),
    ("GET", _D + "/eval_sets/{eval_set_id}/evals"): ("evals", "Case ids of the set", None),
    ("GET", _D + "/eval_sets/{eval_set_id}/evals/{case_id}"): ("evals", "One case", None),
    ("DELETE", _D + "/eval_sets/{eval_set_id}/evals/{case_id}"): ("evals", "Delete a case", None),
    ("POST", _D + "/eval_sets/{eval_set_id}/run_eval"): (
        "evals",
        "Run cases ({eval_ids, eval_metrics}); stores and answers the results",
        None,
    ),
    ("GET", _D + "/eval_results"): ("evals", "Stored eval result ids", None),
    ("GET", _D + "/eval_results/{result_id}"): ("evals", "One stored eval result", None),
}

_PARAM = re.compile(r"{(\w+)(?::\w+)?}")


def _operation(method: str, path: str, route: Route, schemas: dict[str, Any]) -> dict[str, Any]:
    tag, summary, body = DESCRIPTIONS.get((method, path), ("other", "", None))
    if not summary:
        doc = (route.endpoint.__doc__ or route.name or "").strip()
        summary = doc.splitlines()[0] if doc else route.name
    operation: dict[str, Any] = {
        "tags": [tag],
        "summary": summary,
        "operationId": method.lower() + re.sub(r"[^\w-]+", "_", path).rstrip("_"),
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(path)
        ],
        "responses": {"200": {"description": "OK"}},
    }
    if body is not None:
        schemas.setdefault(body.__name__, body.model_json_schema(ref_template=_REF))
        ref = {"$ref": _REF.format(model=body.__name__)}
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": ref}},
        }
    return operation


_REF = "#/components/schemas/{model}"


def _defs(schemas: dict[str, Any]) -> dict[str, Any]:
    """Lifts each schema's ``$defs`` into the shared components."""
    flat: dict[str, Any] = {}
    for name, schema in schemas.items():
        flat.update(schema.pop("$defs", {}))
        flat[name] = schema
    return flat


def spec(app_routes: list[Any]) -> dict[str, Any]:
    """The OpenAPI document of ``app_routes`` (mounts such as the UI bundle left out)."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {}
    for route in app_routes:
        if isinstance(route, Mount) or not isinstance(route, Route):
            continue
        path = _PARAM.sub(r"{\1}", route.path)
        for method in sorted((route.methods or set()) - {"HEAD"}):
            operation = _operation(method, path, route, schemas)
            paths.setdefault(path, {})[method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "adk_rx API server", "version": adk_rx_version()},
        "paths": paths,
        "components": {"schemas": _defs(schemas)},
    }


def _document(request: Request) -> dict[str, Any]:
    """The app's document, built on first use (the routes do not change)."""
    state = request.app.state
    document = getattr(state, "openapi", None)
    if document is None:
        document = state.openapi = spec(list(request.app.routes))
    return document


async def openapi_json(request: Request) -> Response:
    return json_response(_document(request))


async def docs(request: Request) -> Response:
    document = _document(request)
    rows = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            rows.append(
                f"<tr><td>{operation['tags'][0]}</td><td><b>{method.upper()}</b></td>"
                f"<td><code>{html.escape(path)}</code></td>"
                f"<td>{html.escape(operation['summary'])}</td></tr>"
            )
    page = (
        "<!doctype html><meta charset=utf-8><title>adk_rx API</title>"
        "<style>body{font:14px sans-serif;margin:2em}td{padding:3px 10px;"
        "border-bottom:1px solid #ddd}</style>"
        f"<h1>adk_rx API server {html.escape(document['info']['version'])}</h1>"
        '<p>Machine-readable: <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p>'
        "<table><tr><th>tag</th><th>method</th><th>path</th><th>what</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return HTMLResponse(page)


routes = [
    Route("/openapi.json", openapi_json, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
]
