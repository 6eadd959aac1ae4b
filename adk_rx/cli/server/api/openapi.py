"""``/openapi.json`` and ``/docs``: an OpenAPI 3.1 description of every route of the server.

The paths come from the app's own route table, so a route is never left out (one missing
from :data:`~.openapi_operations.OPERATIONS` is described by its handler's docstring, and a
test fails). Each operation's request body and answers are JSON schemas generated from the
pydantic models of :mod:`.api_models` in one pass, so they share ``components/schemas``;
the server's own limits (parts per message) are written into them. Besides its success
answer, each operation lists the errors it can give, all ``{"detail": ...}``:

* 403 from the Host and Origin checks (every route but ``/health``), 401 without a valid
  token where the server has tokens (every route but the public pages and ``/health``);
* 400 for a malformed id and 404 for an unknown app or an object the caller does not have
  (another user's included), on every route with path parameters; 500 when the app named
  fails to load; 503 when the store has no connection to spare;
* 400, 408 and 413 on every route that reads a body (malformed, too slow, too large);
* what is particular to the route (409 for a session with a run in progress ...).

The live WebSocket (``/run_live``) is listed under ``x-websockets``: OpenAPI has no
operations for WebSockets. ``/docs`` is one self-contained page (no script from elsewhere)
listing the routes; ``/openapi.json`` is what API tools import.
"""

from __future__ import annotations

import html
import re
from typing import Any, Optional

import pydantic
import pydantic.json_schema
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, WebSocketRoute

from ..edge.security import PROBE_PATH, PUBLIC_PATHS, PUBLIC_PREFIX
from ..edge.validation import ARTIFACT_NAME_SCHEMA, ID_SCHEMA
from ..limits import Limits
from ..routes.adk_routes_service import adk_rx_version
from ..routes.eval_bodies import EVAL_ID_SCHEMA
from ..shared import json_response, server_of
from .api_models import ErrorBody
from .openapi_operations import OPERATIONS, Operation, Param

__all__ = ["routes", "spec"]

_PARAM = re.compile(r"{(\w+)(?::\w+)?}")
_REF = "#/components/schemas/{model}"
_SSE = "text/event-stream"
_PATH_SCHEMAS: dict[str, Any] = {
    "name": ARTIFACT_NAME_SCHEMA,
    "version": {"type": "string", "pattern": "^(latest|[0-9]+)$"},
    "eval_set_id": EVAL_ID_SCHEMA,
    "case_id": EVAL_ID_SCHEMA,
    "result_id": EVAL_ID_SCHEMA,
}


def _base64(char: str) -> str:
    # Whole quads, then 2 or 3 characters whose unused low bits are zero, padded or not.
    return rf"(?:{char}{{4}})*(?:{char}[AQgw]={{0,2}}|{char}{{2}}[AEIMQUYcgkosw048]=?)?"


_BASE64 = rf"^({_base64('[A-Za-z0-9+/]')}|{_base64('[A-Za-z0-9_-]')})$"
_REDIRECT = {
    "description": "A redirect to the page",
    "headers": {"Location": {"schema": {"type": "string"}}},
}
_MESSAGES = {
    200: "OK",
    202: "Accepted",
    400: "The request is malformed (the detail says what to change)",
    401: "A valid bearer token is required (servers with tokens)",
    403: "Refused: not this server's Host, another origin, or a write the caller may not do",
    404: "No such app or object for this caller (another user's answers the same)",
    408: "The body did not arrive in time",
    409: "The session has a run in progress, or the object exists",
    413: "The body is larger than the server takes (bytes, JSON items or parts)",
    422: "Invalid version",
    500: "The app failed to load, or the run failed on the server's side",
    502: "The model's provider failed the run's call (its message in the detail)",
    503: "Busy or failing for now: the store, a run slot or the model; retry",
    504: "The run did not start in time; it was cancelled",
}


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)


def _errors(path: str, operation: Operation) -> set[int]:
    codes = set(operation.errors)
    if path != PROBE_PATH:
        codes.add(403)
        if not _is_public(path):
            codes.add(401)
    if "{" in path:
        codes |= {400, 404}
    if "{app}" in path or path.startswith("/run"):
        codes |= {404, 500, 503}
    if operation.body is not None:
        codes |= {400, 408, 413}
    return codes


def _param(where: str, param: Param) -> dict[str, Any]:
    return {
        "name": param.name,
        "in": where,
        "required": param.required,
        "description": param.description,
        "schema": param.schema,
    }


def _operation(method: str, path: str, route: Route) -> Operation:
    found = OPERATIONS.get((method, path))
    if found is not None:
        return found
    doc = (route.endpoint.__doc__ or route.name or "").strip()
    return Operation("other", doc.splitlines()[0] if doc else route.name, Any)


def _content(media: str, schema: dict[str, Any]) -> dict[str, Any]:
    if media not in ("application/json", _SSE):  # a page, a text, a redirect's empty body
        schema = {"type": "string"}
    return {media: {"schema": schema}}


def _stream(method: str, path: str, operation: Operation, schemas: dict[Any, Any]) -> Any:
    """One event of the stream (OpenAPI 3.1 describes each event of ``text/event-stream``):
    its name (``message`` when it has none), cursor and JSON ``data`` of that name's type."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "event": {"const": name},
                    "id": {"type": "string"},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": schemas[(method, path, "event", name), "serialization"],
                    },
                },
                "required": ["data"],
            }
            for name, _ in operation.events
        ]
    }


def _describe(
    method: str, path: str, operation: Operation, schemas: dict[Any, Any]
) -> dict[str, Any]:
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": _PATH_SCHEMAS.get(name, ID_SCHEMA),
        }
        for name in _PARAM.findall(path)
    ]
    parameters += [_param("query", p) for p in operation.query]
    parameters += [_param("header", p) for p in operation.headers]
    if operation.events:
        answer = _stream(method, path, operation, schemas)
    else:
        answer = schemas[(method, path, "answer"), "serialization"]
    responses: dict[str, Any] = {
        str(status): {
            "description": _MESSAGES[status],
            "content": _content(operation.media, answer),
        }
        if status != 307
        else _REDIRECT
        for status in operation.status
    }
    error = {"$ref": _REF.format(model="ErrorBody")}
    for status in sorted(_errors(path, operation)):
        responses[str(status)] = {
            "description": _MESSAGES[status],
            "content": _content("application/json", error),
        }
    described: dict[str, Any] = {
        "tags": [operation.tag],
        "summary": operation.summary,
        "operationId": method.lower() + re.sub(r"[^\w-]+", "_", path).rstrip("_"),
        "parameters": parameters,
        "responses": responses,
    }
    if _is_public(path) or path == PROBE_PATH:
        described["security"] = []
    if operation.body is not None:
        described["requestBody"] = {
            "required": operation.body_required,
            "content": {
                "application/json": {"schema": schemas[(method, path, "body"), "validation"]}
            },
        }
    return described


class _Schemas(pydantic.json_schema.GenerateJsonSchema):
    """pydantic's generator, quiet about defaults it cannot write (an event's empty
    ``EventActions``): the schema leaves them out, which is all a client needs."""

    ignored_warning_kinds = {"skipped-choice", "non-serializable-default"}

    def bytes_schema(self, schema: Any) -> dict[str, Any]:
        """Bytes in JSON (google-genai's ``data``, ``thoughtSignature``) are base64, standard
        or URL-safe, and pydantic refuses any other text: the pattern says which."""
        described = super().bytes_schema(schema)
        if described.get("format") in ("base64", "base64url"):
            described["pattern"] = _BASE64
        return described


def _with_limits(definitions: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The server's own bounds written into the schemas that carry them."""
    for name, schema in definitions.items():
        if name.startswith("MessageContent"):
            schema["properties"]["parts"]["maxItems"] = limits.max_parts
    return definitions


def spec(app_routes: list[Any], limits: Limits | None = None) -> dict[str, Any]:
    """The OpenAPI document of ``app_routes`` (mounts such as the UI bundle left out)."""
    found: list[tuple[str, str, Operation]] = []
    websockets: dict[str, Any] = {}
    for route in app_routes:
        if isinstance(route, WebSocketRoute):
            doc = (route.endpoint.__doc__ or "").strip()
            websockets[route.path] = {"summary": doc.splitlines()[0] if doc else route.name}
        if not isinstance(route, Route):
            continue
        path = _PARAM.sub(r"{\1}", route.path)
        for method in sorted((route.methods or set()) - {"HEAD"}):
            found.append((method, path, _operation(method, path, route)))
    inputs: list[tuple[Any, Any, pydantic.TypeAdapter[Any]]] = [
        ("error", "serialization", pydantic.TypeAdapter(ErrorBody))
    ]
    for method, path, operation in found:
        inputs.append(
            ((method, path, "answer"), "serialization", pydantic.TypeAdapter(operation.answer))
        )
        for name, data in operation.events:
            adapter = pydantic.TypeAdapter(data)
            inputs.append(((method, path, "event", name), "serialization", adapter))
        if operation.body is not None:
            # A body that may be left out may also be a JSON null: the routes read both as none.
            body = operation.body if operation.body_required else Optional[operation.body]  # noqa: UP045
            inputs.append(((method, path, "body"), "validation", pydantic.TypeAdapter(body)))
    schemas, definitions = pydantic.TypeAdapter.json_schemas(
        inputs, by_alias=True, ref_template=_REF, schema_generator=_Schemas
    )
    paths: dict[str, dict[str, Any]] = {}
    for method, path, operation in found:
        paths.setdefault(path, {})[method.lower()] = _describe(method, path, operation, schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "adk_rx API server", "version": adk_rx_version()},
        "paths": paths,
        "components": {
            "schemas": _with_limits(definitions.get("$defs", {}), limits or Limits()),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        # Tokens are optional: a server started with them needs one on every route but the
        # public ones; without them, none.
        "security": [{"bearer": []}, {}],
        "x-websockets": websockets,
    }


def _document(request: Request) -> dict[str, Any]:
    """The app's document, built on first use (the routes do not change)."""
    state = request.app.state
    document = getattr(state, "openapi", None)
    if document is None:
        document = state.openapi = spec(list(request.app.routes), server_of(request).limits)
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
    for path, socket in document["x-websockets"].items():
        rows.append(
            f"<tr><td>live</td><td><b>WebSocket</b></td><td><code>{html.escape(path)}</code>"
            f"</td><td>{html.escape(socket['summary'])}</td></tr>"
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
