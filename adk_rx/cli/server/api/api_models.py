"""The JSON the API takes and answers, as pydantic models: ``/openapi.json`` is generated from them.

Where a route validates with a pydantic model, that model is used as it is: google-genai's
``Content`` and ``Part``, :class:`~adk_rx.events.Event`, the eval bodies of
:mod:`adk_rx.cli.server.routes.eval_bodies`. The other bodies are checked by hand
(:mod:`adk_rx.cli.server.edge.bodies`, :mod:`adk_rx.cli.server.routes.adk_routes_sessions`,
:mod:`adk_rx.cli.server.routes.adk_routes_artifacts`); their models here say what those checks
take, and the suite's fuzzer holds the two together: a body that fits a model must be
accepted, one that does not must be refused with a 4xx.

Answers are described as they are written: events and genai values in camelCase (their
aliases), the server's own objects in the keys the routes write.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import pydantic
from google.genai import types

from adk_rx.events import EMPTY_ACTIONS, Event, EventActions

from ..edge.validation import ARTIFACT_NAME_SCHEMA, ID_SCHEMA

__all__ = [
    "AddedCase",
    "AgentGraph",
    "AppInfo",
    "AppInfoWithAgents",
    "ArtifactVersion",
    "ClientState",
    "CreateSessionRequest",
    "DetailedApps",
    "DotSource",
    "ErrorBody",
    "EvalCaseJson",
    "EvalCaseResult",
    "EvalSetIds",
    "EvalSetJson",
    "Health",
    "InvocationRequest",
    "InvocationStatus",
    "InvocationTrace",
    "MemoryRequest",
    "MessageContent",
    "RewindRequest",
    "RunRequest",
    "SaveArtifactRequest",
    "SeedEvent",
    "SessionJson",
    "SseError",
    "StreamEnd",
    "StreamGap",
    "Telemetry",
    "UiConfig",
    "UiRuntimeConfig",
    "UpdateSessionRequest",
    "VersionInfo",
]

Id = Annotated[str, pydantic.WithJsonSchema(ID_SCHEMA)]
"""An app, user, session or invocation id (what
:func:`~adk_rx.cli.server.edge.validation.check_id` takes)."""
ArtifactName = Annotated[str, pydantic.WithJsonSchema(ARTIFACT_NAME_SCHEMA)]
"""A plain file name (what :func:`~adk_rx.cli.server.edge.validation.check_artifact_name`
takes)."""
# State a client writes: any JSON values under keys without NUL (a user: key is a column
# value in a SQL store, and PostgreSQL refuses NUL in text).
ClientState = Annotated[
    dict[str, Any],
    pydantic.WithJsonSchema({"type": "object", "propertyNames": {"pattern": "^[^\\x00]*$"}}),
]
"""State a client writes (what
:func:`~adk_rx.cli.server.edge.validation.check_client_state` takes)."""


# -- requests ----------------------------------------------------------------------------------
class MessagePart(types.Part):
    """A part of a client's message: anything a Part holds but a ``function_call`` (calls come
    from the model). A ``function_response`` must answer an open call of the session by its id
    (400 otherwise): the session's state decides that, the schema cannot."""

    function_call: None = None  # pyright: ignore[reportIncompatibleVariableOverride]


class MessageContent(types.Content):
    """``new_message``: at least one part (at most the server's ``max_parts``)."""

    parts: list[MessagePart] = pydantic.Field(min_length=1)  # pyright: ignore[reportIncompatibleVariableOverride]


class _RunFields(pydantic.BaseModel):
    new_message: MessageContent
    streaming: bool | None = pydantic.Field(None, description="partial events too (SSE)")
    state_delta: ClientState | None = pydantic.Field(
        None, description="state keys to write first; no app: keys (403)"
    )
    invocation_id: Id | None = pydantic.Field(
        None, description="resume this invocation of the session"
    )
    function_call_event_id: Id | None = None


class RunRequest(_RunFields):
    """``/run`` and ``/run_sse``: which session, and the user's message.

    camelCase spellings of the keys are accepted too.
    """

    app_name: Id
    user_id: Id
    session_id: Id


class InvocationRequest(_RunFields):
    """``POST .../invocations``: the path names the session (``app_name``, ``user_id`` or
    ``session_id`` in the body are refused unless they name the path's)."""


_EMPTY = {"anyOf": [{"type": "null"}, {"type": "object", "maxProperties": 0}]}


@dataclasses.dataclass(frozen=True)
class SeedEvent(Event):
    """An event a client seeds a new session with: what was said, never what only the
    runtime writes (actions, pending long-running calls, partial chunks, calls of
    ``adk_request_confirmation`` and the other runtime functions)."""

    actions: Annotated[  # pyright: ignore[reportIncompatibleVariableOverride]
        EventActions,
        pydantic.WithJsonSchema({"type": "object", "additionalProperties": _EMPTY}),
    ] = EMPTY_ACTIONS
    long_running_tool_ids: Annotated[  # pyright: ignore[reportIncompatibleVariableOverride]
        frozenset[str] | None,
        pydantic.WithJsonSchema({"anyOf": [{"type": "array", "maxItems": 0}, {"type": "null"}]}),
    ] = None
    partial: Literal[False] | None = None  # pyright: ignore[reportIncompatibleVariableOverride]


class CreateSessionRequest(pydantic.BaseModel):
    """``POST .../sessions``: an optional id, initial state (no app: keys) and seed events
    (no actions, partial chunks, long-running ids or runtime calls)."""

    session_id: Id | None = None
    state: ClientState | None = None
    events: list[SeedEvent] | None = None


class UpdateSessionRequest(pydantic.BaseModel):
    """``PATCH .../sessions/{sid}``: the state delta to store (``state_delta`` also taken)."""

    stateDelta: ClientState


class MemoryRequest(pydantic.BaseModel):
    """``PATCH .../memory``: the session to add to the memory service."""

    session_id: Id


class RewindRequest(pydantic.BaseModel):
    """``POST .../sessions/{sid}/rewind``: the invocation to rewind the session to before."""

    invocation_id: Id


class SaveArtifactRequest(pydantic.BaseModel):
    """``POST .../artifacts``: a new version of ``filename``; custom metadata is not kept, so
    a non-empty one is refused."""

    filename: ArtifactName
    artifact: types.Part
    customMetadata: dict[str, Any] | None = pydantic.Field(None, max_length=0)


# -- answers -----------------------------------------------------------------------------------
class ErrorBody(pydantic.BaseModel):
    """Every 4xx and 5xx answer (``traceback``: an app that failed to load, ``adk-rx web``)."""

    detail: str
    traceback: str | None = None


class SessionJson(pydantic.BaseModel):
    """A session (``events`` empty in lists)."""

    id: str
    appName: str
    userId: str
    state: dict[str, Any]
    lastUpdateTime: float
    events: list[Event]


class AppInfo(pydantic.BaseModel):
    """One app, as ``/list-apps?detailed=true`` lists it."""

    name: str
    rootAgentName: str
    description: str
    language: Literal["python"]
    isComputerUse: bool


class AppInfoWithAgents(AppInfo):
    """``app-info``: the app and each LlmAgent of its tree by name."""

    agents: dict[str, dict[str, Any]]


class DetailedApps(pydantic.BaseModel):
    apps: list[AppInfo]


class VersionInfo(pydantic.BaseModel):
    version: str
    language: Literal["python"]
    language_version: str


class Health(pydantic.BaseModel):
    status: Literal["ok"]


class Telemetry(pydantic.BaseModel):
    telemetry: Literal[False]


class ArtifactVersion(pydantic.BaseModel):
    """One saved version of an artifact (``createTime``: when a session event recorded it)."""

    version: int
    canonicalUri: str
    customMetadata: dict[str, Any]
    createTime: float | None = None
    mimeType: str | None = None


class InvocationStatus(pydantic.BaseModel):
    """A run the server owns: its status and the cursor of its last event."""

    invocation_id: str | None
    status: str
    error: str | None
    last_event_id: int
    created_at: float
    finished_at: float | None


class InvocationTrace(pydantic.BaseModel):
    """The spans of an invocation, or its events' timings when the server holds no span."""

    source: Literal["spans", "events"]
    spans: list[dict[str, Any]] | None = None
    events: list[dict[str, Any]] | None = None


class SseError(pydantic.BaseModel):
    """``/run_sse``'s last frame when the run fails (google-adk's shape)."""

    error: str
    error_details: dict[str, Any]


class StreamEnd(pydantic.BaseModel):
    """The ``end`` frame of an invocation's stream: how the run ended."""

    invocation_id: str | None
    status: str
    error: str | None


class StreamGap(pydantic.BaseModel):
    """A ``gap`` frame: the events between these cursors fell out of the server's window."""

    from_: int = pydantic.Field(alias="from")
    to: int


class DotSource(pydantic.BaseModel):
    """Graphviz DOT source of the agent graph."""

    dotSrc: str


class AgentGraph(pydantic.BaseModel):
    """``build_graph``: the agent tree (and the app's README.md)."""

    name: str
    root_agent: dict[str, Any]
    readme: str | None = None


class AddedCase(pydantic.BaseModel):
    """The case a session became, and a warning for each call the session still waits on
    (an approval, a credential, a long-running call): the case holds no answer to it."""

    eval_id: str
    warnings: list[str]


class UiRuntimeConfig(pydantic.BaseModel):
    backendUrl: Literal[""]
    telemetry: Literal[False]


class UiConfig(pydantic.BaseModel):
    logo_text: str | None
    logo_image_url: str | None


class EvalSetIds(pydantic.BaseModel):
    eval_set_ids: list[str]


class EvalCaseJson(pydantic.BaseModel):
    """An eval case (snake_case keys, as in an ``.evalset.json`` file)."""

    model_config = pydantic.ConfigDict(extra="allow")

    eval_id: str
    conversation: list[dict[str, Any]] = []
    session_input: dict[str, Any] | None = None
    creation_timestamp: float | None = None


class EvalSetJson(pydantic.BaseModel):
    """An eval set, as its ``.evalset.json`` file holds it."""

    model_config = pydantic.ConfigDict(extra="allow")

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCaseJson] = []
    creation_timestamp: float | None = None


class EvalCaseResult(pydantic.BaseModel):
    """One case of a ``run_eval`` answer (``final_eval_status``: 1 passed, 2 failed)."""

    model_config = pydantic.ConfigDict(extra="allow")

    eval_set_file: str
    eval_set_id: str
    eval_id: str
    user_id: str
    final_eval_status: Literal[1, 2]
    overall_eval_metric_results: list[dict[str, Any]]
    session_id: str
    error: str | None
