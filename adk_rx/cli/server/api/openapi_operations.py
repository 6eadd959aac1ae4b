"""What each route takes and answers, for ``/openapi.json``: one :class:`Operation` per
(method, path) of the server's route table.

The JSON shapes are the models of :mod:`.api_models` (and the eval bodies of
:mod:`adk_rx.cli.server.routes.eval_bodies`); :mod:`.openapi` turns them into schemas and adds the
answers every route of a kind gives (401 without a token, 404 for an unknown app or another
user's object, 413 for an oversize body ...). ``errors`` lists only what is particular to a
route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.genai import types

from adk_rx.events import Event

from ..routes.eval_bodies import AddSessionBody, CreateEvalSetBody, RunEvalBody
from . import api_models as m

__all__ = ["OPERATIONS", "Operation", "Param"]


@dataclass(frozen=True, slots=True)
class Param:
    """A query or header parameter."""

    name: str
    description: str
    schema: dict[str, Any]
    required: bool = False


@dataclass(frozen=True, slots=True)
class Operation:
    """One route's description: ``answer`` is the type of its success JSON (``None``: the
    JSON ``null``), ``body`` the type of its request body (``None``: it takes none); an event
    stream's ``events`` pair each event name with the type of its ``data`` JSON."""

    tag: str
    summary: str
    answer: Any = None
    body: Any = None
    status: tuple[int, ...] = (200,)
    media: str = "application/json"
    errors: tuple[int, ...] = ()
    query: tuple[Param, ...] = ()
    headers: tuple[Param, ...] = ()
    body_required: bool = True
    events: tuple[tuple[str, Any], ...] = ()


_TEXT = {"type": "string"}
_DARK = Param("dark_mode", "`true` or `1`: colours for a dark page", _TEXT)
_TRACEPARENT = Param("traceparent", "W3C trace context: the run's spans continue this trace", _TEXT)
_SSE = "text/event-stream"
_CURSOR = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
# app: state; a run in progress; the provider failed; too many runs or the store failed; no start
_RUN_ERRORS = (403, 409, 502, 503, 504)

_S = "/apps/{app}/users/{user}/sessions"
_I = _S + "/{sid}/invocations"
_A = _S + "/{sid}/artifacts"
_D = "/dev/apps/{app}"
_E = _D + "/eval_sets/{eval_set_id}"

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/"): Operation(
        "pages",
        "The dev page (`adk-rx web`), a redirect to google-adk's (`--ui google-adk`), or 404",
        status=(200, 307),
        media="text/html",
        errors=(404,),
    ),
    ("GET", "/dev-ui"): Operation(
        "pages", "A redirect to google-adk's dev UI (`--ui google-adk`)", status=(307,)
    ),
    ("GET", "/dev-ui/assets/config/runtime-config.json"): Operation(
        "pages", "The dev UI's start-up config: the API is this server", m.UiRuntimeConfig
    ),
    ("GET", "/dev-ui/config"): Operation("pages", "The dev UI's logo (none)", m.UiConfig),
    ("GET", "/list-apps"): Operation(
        "apps",
        "App names; `?detailed=true`: each app's info (apps that fail to load left out)",
        list[str] | m.DetailedApps,
        query=(Param("detailed", "`true` or `1` for each app's info", _TEXT),),
    ),
    ("GET", "/apps/{app}/app-info"): Operation(
        "apps",
        "One app's info and its LlmAgents (400: the root is no LlmAgent)",
        m.AppInfoWithAgents,
        errors=(400,),
    ),
    ("GET", "/version"): Operation("service", "Server version and language", m.VersionInfo),
    ("GET", "/health"): Operation("service", "Liveness: answers any caller", m.Health),
    ("GET", "/config/telemetry"): Operation("service", "Usage telemetry (always off)", m.Telemetry),
    ("POST", "/config/telemetry"): Operation(
        "service",
        "Accepted, changes nothing: adk_rx sends no telemetry",
        m.Telemetry,
        errors=(400,),
        headers=(Param("X-Adk-Telemetry-Request", "must be `true`", {"const": "true"}, True),),
    ),
    ("POST", _S): Operation(
        "sessions",
        "Create a session (id, state, seed events)",
        m.SessionJson,
        m.CreateSessionRequest,
        errors=(403, 409),
        body_required=False,
    ),
    ("GET", _S): Operation(
        "sessions", "The user's sessions, newest first (without events)", list[m.SessionJson]
    ),
    ("GET", _S + "/{sid}"): Operation("sessions", "A session with its events", m.SessionJson),
    ("POST", _S + "/{sid}"): Operation(
        "sessions",
        "Create a session with this id; the body is its initial state",
        m.SessionJson,
        m.ClientState,
        errors=(403, 409),
        body_required=False,
    ),
    ("PATCH", _S + "/{sid}"): Operation(
        "sessions",
        "Store a state delta as an event",
        m.SessionJson,
        m.UpdateSessionRequest,
        errors=(403, 409),
    ),
    ("DELETE", _S + "/{sid}"): Operation(
        "sessions", "Delete a session, its artifacts and memories", errors=(409,)
    ),
    ("POST", _S + "/{sid}/rewind"): Operation(
        "sessions",
        "Rewind the session to before an invocation (its events hidden, its state and "
        "artifact changes undone)",
        m.SessionJson,
        m.RewindRequest,
        errors=(409,),
    ),
    ("PATCH", "/apps/{app}/users/{user}/memory"): Operation(
        "sessions", "Add a session to the memory service", body=m.MemoryRequest
    ),
    ("GET", _A): Operation("artifacts", "Artifact names of the session", list[str]),
    ("POST", _A): Operation(
        "artifacts", "Save a new artifact version", m.ArtifactVersion, m.SaveArtifactRequest
    ),
    ("GET", _A + "/{name}"): Operation(
        "artifacts",
        "The latest version (or `?version=N`)",
        types.Part,
        query=(Param("version", "a version number", {"type": "integer"}),),
    ),
    ("DELETE", _A + "/{name}"): Operation("artifacts", "Delete every version"),
    ("GET", _A + "/{name}/versions"): Operation("artifacts", "Version numbers", list[int]),
    ("GET", _A + "/{name}/versions/metadata"): Operation(
        "artifacts", "Every version's record", list[m.ArtifactVersion]
    ),
    ("GET", _A + "/{name}/versions/{version}"): Operation(
        "artifacts", "One version (a number or `latest`)", types.Part, errors=(422,)
    ),
    ("GET", _A + "/{name}/versions/{version}/metadata"): Operation(
        "artifacts", "One version's record", m.ArtifactVersion, errors=(422,)
    ),
    ("POST", "/run"): Operation(
        "runs",
        "Run a turn; answers its events once it ends (or the status of its failure)",
        list[Event],
        m.RunRequest,
        errors=(*_RUN_ERRORS, 500),
        headers=(_TRACEPARENT,),
    ),
    ("POST", "/run_sse"): Operation(
        "runs",
        "Run a turn; its events as SSE `data:` frames",
        body=m.RunRequest,
        media=_SSE,
        events=(("message", Event | m.SseError),),
        errors=_RUN_ERRORS,
        headers=(_TRACEPARENT,),
    ),
    ("POST", _I): Operation(
        "invocations",
        "Start a run the server owns; `Location` is its events' stream",
        m.InvocationStatus,
        m.InvocationRequest,
        (202,),
        errors=_RUN_ERRORS,
        headers=(_TRACEPARENT,),
    ),
    ("GET", _I): Operation(
        "invocations", "The session's invocations the server holds", list[m.InvocationStatus]
    ),
    ("GET", _I + "/{iid}"): Operation("invocations", "One invocation's status", m.InvocationStatus),
    ("GET", _I + "/{iid}/events"): Operation(
        "invocations",
        "SSE of its events after a cursor, then an `end` frame",
        media=_SSE,
        events=(("message", Event), ("end", m.StreamEnd), ("gap", m.StreamGap)),
        query=(
            Param(
                "after",
                "the cursor (`id:`) of the last event read",
                _CURSOR,
            ),
        ),
        headers=(
            Param(
                "Last-Event-ID",
                "the cursor, when `after` is not given (an empty one is none)",
                {"anyOf": [_CURSOR, {"const": ""}]},
            ),
        ),
    ),
    ("POST", _I + "/{iid}:cancel"): Operation(
        "invocations",
        "Cancel the run (202), or its final status (200) when it had ended",
        m.InvocationStatus,
        status=(200, 202),
    ),
    ("GET", _I + "/{iid}/trace"): Operation(
        "invocations", "The invocation's spans, or its events' timings", m.InvocationTrace
    ),
    ("GET", _D + "/build_graph"): Operation(
        "dev", "The agent tree (and the app's README)", m.AgentGraph
    ),
    ("GET", _D + "/build_graph_image"): Operation(
        "dev",
        "DOT source of the graph from `node` (an agent path; the root by default)",
        dict[str, m.DotSource],
        query=(_DARK, Param("node", "the agent's path, e.g. `root/helper`", _TEXT)),
    ),
    ("GET", _D + "/graph"): Operation(
        "dev", "DOT source of the agent graph", m.DotSource, query=(_DARK,)
    ),
    ("GET", _D + "/users/{user}/sessions/{sid}/events/{event_id}/graph"): Operation(
        "dev",
        "The graph with an event's author and calls highlighted (`{}`: no such event)",
        m.DotSource | dict[str, Any],
        query=(_DARK,),
    ),
    ("GET", _D + "/debug/trace/session/{sid}"): Operation(
        "dev", "The caller's session's trace spans", list[dict[str, Any]]
    ),
    ("GET", _D + "/debug/trace/{event_id}"): Operation(
        "dev", "The attributes of an event's model-call span", dict[str, Any]
    ),
    ("GET", _D + "/builder"): Operation(
        "dev", "Agent YAML: empty (adk_rx apps are Python)", media="text/plain"
    ),
    ("GET", _D + "/eval_sets"): Operation(
        "evals", "The caller's and the app's eval set ids", list[str]
    ),
    ("GET", _D + "/eval-sets"): Operation(
        "evals", "The same ids, as `{eval_set_ids}`", m.EvalSetIds
    ),
    ("POST", _D + "/eval-sets"): Operation(
        "evals",
        "Create one of the caller's eval sets",
        m.EvalSetJson,
        CreateEvalSetBody,
        errors=(403, 409),
    ),
    ("POST", _E): Operation(
        "evals",
        "Create one of the caller's eval sets, empty (the body is not used)",
        m.EvalSetJson,
        dict[str, Any],
        errors=(403, 409),
        body_required=False,
    ),
    ("POST", _E + "/add_session"): Operation(
        "evals",
        "Add one of the caller's sessions as a case (warnings: calls it still waits on)",
        m.AddedCase,
        AddSessionBody,
        errors=(403, 409),
    ),
    ("POST", _D + "/eval-sets/{eval_set_id}/add-session"): Operation(
        "evals",
        "Add one of the caller's sessions as a case (warnings: calls it still waits on)",
        m.AddedCase,
        AddSessionBody,
        errors=(403, 409),
    ),
    ("GET", _E + "/evals"): Operation("evals", "The set's case ids", list[str]),
    ("GET", _E + "/evals/{case_id}"): Operation("evals", "One case", m.EvalCaseJson),
    ("DELETE", _E + "/evals/{case_id}"): Operation(
        "evals", "Delete a case of one of the caller's sets", errors=(403,)
    ),
    ("POST", _E + "/run_eval"): Operation(
        "evals",
        "Run cases (every case when none is named); stores and answers the results",
        list[m.EvalCaseResult],
        RunEvalBody,
        body_required=False,
    ),
    ("GET", _D + "/eval_results"): Operation("evals", "The caller's stored result ids", list[str]),
    ("GET", _D + "/eval_results/{result_id}"): Operation(
        "evals", "One of the caller's results", dict[str, Any]
    ),
    ("GET", "/openapi.json"): Operation("service", "This document", dict[str, Any]),
    ("GET", "/docs"): Operation("service", "The routes as a page", media="text/html"),
}
