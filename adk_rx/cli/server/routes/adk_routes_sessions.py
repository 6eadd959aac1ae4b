"""google-adk's session writes: create (with initial state and seed events), patch, delete.

The shapes follow google-adk's API server:

* ``POST .../sessions`` takes ``{session_id?, state?, events?}`` (camelCase accepted); the
  ``events`` are stored in order after the session is made, so a client can restore a
  conversation. A seed event may hold ordinary text, tool calls and tool responses, but no
  actions, no long-running ids, no partial chunk and no call of the runtime's own functions
  (``adk_request_confirmation`` ...): those are the runtime's to write (400 otherwise).
* ``POST .../sessions/{sid}`` takes the body itself as the initial state.
* ``PATCH .../sessions/{sid}`` takes ``{"stateDelta": {...}}``, stores it as an event by
  ``user`` whose invocation id starts with ``p-``, and answers the updated session.
* ``DELETE .../sessions/{sid}`` answers 200 with ``null``;
* ``PATCH /apps/{app}/users/{user}/memory`` with ``{"session_id"}`` adds the session to the
  memory service.
* ``POST .../sessions/{sid}/rewind`` with ``{"invocation_id"}`` rewinds the session to before
  that invocation (``Runner.rewind``) and answers the session; 404 for an invocation the
  session does not hold.

A write on a session whose run is in progress answers 409, so it never interleaves with the
run's own events.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.errors import (
    ConfigurationError,
    InvocationNotFoundError,
    SessionBusyError,
    SessionExistsError,
)
from adk_rx.events import Event, EventActions
from adk_rx.rx._engine.awaitable import gather

from ..edge.bodies import session_json
from ..edge.validation import check_client_state, check_id, check_new_id
from ..shared import json_response, not_found, runner_for, server_of
from .session_routes import find_session, ids_of, json_body

__all__ = ["RUNTIME_FUNCTIONS", "routes", "seed_events"]

RUNTIME_FUNCTIONS = frozenset(
    {"adk_request_confirmation", "adk_request_credential", "adk_request_input"}
)
"""Function calls the runtime writes itself to drive human-in-the-loop steps."""


def _camel(data: Mapping[str, Any], name: str) -> Any:
    if name in data:
        return data[name]
    head, *rest = name.split("_")
    return data.get(head + "".join(word.capitalize() for word in rest))


def seed_events(raw: Any) -> list[Event]:
    """Parses and checks the ``events`` of a create body.

    Raises:
        HTTPException: 400 for a malformed event or one only the runtime may write.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise HTTPException(400, "events must be a list of events")
    events: list[Event] = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise HTTPException(400, f"session initialization event {index} is not an object")
        try:
            event = Event.from_dict(item)
        # AttributeError: google-genai's enum fields raise it for a value that is no string.
        except (ValueError, TypeError, AttributeError) as exc:
            raise HTTPException(
                400, f"session initialization event {index} is not a valid event: {exc}"
            ) from exc
        refused = _refused_part(event)
        if refused is not None:
            raise HTTPException(
                400, f"session initialization event {index} cannot include {refused}"
            )
        events.append(event)
    return events


def _refused_part(event: Event) -> str | None:
    if event.partial:
        return "a partial chunk"
    if event.long_running_tool_ids:
        return "long-running tool ids"
    if event.actions != EventActions():
        return "event actions"
    names = [c.name for c in event.get_function_calls()]
    names += [r.name for r in event.get_function_responses()]
    if any(name in RUNTIME_FUNCTIONS for name in names):
        return "the runtime's own function calls"
    return None


async def _create(
    request: Request, state: Any, sid: Any, events: list[Event] | None = None
) -> Response:
    app_name, user = await ids_of(request)
    check_new_id(user, "the user id")
    if state is not None and not isinstance(state, Mapping):
        raise HTTPException(400, "state must be an object")
    if sid is not None and not isinstance(sid, str):
        raise HTTPException(400, "session_id must be a string")
    if sid:
        check_new_id(sid, "the session id")
    if state is not None:
        check_client_state(state, "a new session's state", server_of(request).limits)
    sessions = server_of(request).sessions
    try:
        (session,) = await gather(
            sessions.create_session(
                app_name=app_name, user_id=user, state=state, session_id=sid or None
            )
        )
    except SessionExistsError as exc:
        raise HTTPException(409, str(exc)) from exc
    except ConfigurationError as exc:
        raise HTTPException(400, str(exc)) from exc
    for event in events or ():
        await gather(sessions.append_event(session, event))
    if events:
        session = await find_session(request, app_name, user, session.id)
    return json_response(session_json(session))


async def create_session(request: Request) -> Response:
    """``POST .../sessions`` with ``{session_id?, state?, events?}``."""
    body = await json_body(request)
    events = seed_events(_camel(body, "events"))
    return await _create(request, _camel(body, "state"), _camel(body, "session_id"), events)


async def create_session_with_id(request: Request) -> Response:
    """``POST .../sessions/{sid}``: the body is the initial state."""
    state = await json_body(request)
    return await _create(request, state or None, request.path_params["sid"])


def _not_running(request: Request, app_name: str, user: str, sid: str) -> None:
    if server_of(request).registry.is_running((app_name, user, sid)):
        raise HTTPException(409, f"session {sid!r} has a run in progress; cancel it first")


async def update_session(request: Request) -> Response:
    """``PATCH .../sessions/{sid}`` with ``{"stateDelta": {...}}``: the updated session."""
    app_name, user = await ids_of(request)
    sid = request.path_params["sid"]
    body = await json_body(request)
    delta = _camel(body, "state_delta")
    if not isinstance(delta, Mapping):
        raise HTTPException(400, "stateDelta is required (an object of state keys to values)")
    check_client_state(delta, "stateDelta", server_of(request).limits)
    session = await find_session(request, app_name, user, sid)
    _not_running(request, app_name, user, sid)
    event = Event(
        invocation_id=f"p-{uuid.uuid4()}",
        author="user",
        actions=EventActions(state_delta=dict(delta)),
    )
    try:
        await gather(server_of(request).sessions.append_event(session, event))
    except ConfigurationError as exc:
        raise HTTPException(400, str(exc)) from exc
    return json_response(session_json(await find_session(request, app_name, user, sid)))


async def delete_session(request: Request) -> Response:
    """``DELETE .../sessions/{sid}``: 200 ``null`` (404 for a session that is not there)."""
    app_name, user = await ids_of(request)
    sid = request.path_params["sid"]
    await find_session(request, app_name, user, sid)
    _not_running(request, app_name, user, sid)
    runners = server_of(request).runners
    key = {"app_name": app_name, "user_id": user, "session_id": sid}
    # The session's artifacts and memories go with it (the user's user: files stay).
    await gather(runners.session_service.delete_session(**key))
    # An id the artifact store cannot name (too long for a file name) holds no artifacts.
    with contextlib.suppress(ConfigurationError):
        await gather(runners.artifact_service.delete_session_artifacts(**key))
    await gather(runners.memory_service.delete_session_memories(**key))
    return json_response(None)


async def add_to_memory(request: Request) -> Response:
    """``PATCH /apps/{app}/users/{user}/memory`` with ``{"session_id"}``: the session's events
    go to the memory service; answers ``null``."""
    app_name, user = await ids_of(request)
    sid = _camel(await json_body(request), "session_id")
    if not isinstance(sid, str) or not sid:
        raise HTTPException(400, "session_id is required")
    session = await find_session(request, app_name, user, sid)
    await gather(server_of(request).runners.memory_service.add_session_to_memory(session))
    return json_response(None)


async def rewind_session(request: Request) -> Response:
    """``POST .../sessions/{sid}/rewind`` with ``{"invocation_id"}``: the rewound session."""
    app_name, user = await ids_of(request)
    sid = request.path_params["sid"]
    invocation_id = _camel(await json_body(request), "invocation_id")
    if not isinstance(invocation_id, str) or not invocation_id:
        raise HTTPException(400, "invocation_id is required")
    check_id(invocation_id, "invocation_id")
    await find_session(request, app_name, user, sid)
    _not_running(request, app_name, user, sid)
    runner = await runner_for(request, app_name)
    rewind = runner.rewind(user_id=user, session_id=sid, rewind_before_invocation_id=invocation_id)
    try:
        await gather(rewind)
    except InvocationNotFoundError as exc:
        raise not_found(f"invocation {invocation_id!r}") from exc
    except SessionBusyError as exc:
        raise HTTPException(409, str(exc)) from exc
    return json_response(session_json(await find_session(request, app_name, user, sid)))


_SESSIONS = "/apps/{app}/users/{user}/sessions"
routes = [
    Route(_SESSIONS, create_session, methods=["POST"]),
    Route(_SESSIONS + "/{sid}", create_session_with_id, methods=["POST"]),
    Route(_SESSIONS + "/{sid}", update_session, methods=["PATCH"]),
    Route(_SESSIONS + "/{sid}", delete_session, methods=["DELETE"]),
    Route("/apps/{app}/users/{user}/memory", add_to_memory, methods=["PATCH"]),
    Route(_SESSIONS + "/{sid}/rewind", rewind_session, methods=["POST"]),
]
