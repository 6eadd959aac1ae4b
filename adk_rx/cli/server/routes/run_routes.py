"""Running: ADK's ``/run`` and ``/run_sse``, and the server-owned invocations routes.

Every run is a server-owned invocation (:mod:`adk_rx.cli.server.invocations.registry`): a
client that disconnects, from ``/run_sse`` too, only detaches; the run goes on and its events
carry the invocation id, so the client can reattach through ``.../invocations/{id}/events``.
"""

from __future__ import annotations

from array import array
from typing import Any, NoReturn

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.errors import ConfigurationError, SessionBusyError, TooManyRunsError
from adk_rx.events import Event
from adk_rx.runner import Runner
from adk_rx.telemetry.propagation import continued_trace

from ..cluster.broker import BrokerUnavailableError
from ..cluster.remote import RemoteInvocation, remote_frames
from ..cluster.turns import hold_turn, release_turn
from ..edge.bodies import RunBody, parse_run_body
from ..edge.body_reader import read_json
from ..edge.validation import check_id, parse_cursor
from ..invocations.log import InvocationLog
from ..invocations.replay import replay_frames, stored_entries, tombstone_status
from ..invocations.retention import Tombstone
from ..invocations.sse import adk_frames, invocation_frames, sse_response
from ..shared import Server, json_response, not_found, runner_for, server_of, user_path
from .session_routes import find_session

__all__ = ["routes"]


async def _body(request: Request, **path_ids: str) -> RunBody:
    limits = server_of(request).limits
    body = parse_run_body(await read_json(request, limits), limits, **path_ids)
    user_path(request, body.user_id)
    return body


async def _start(request: Request, body: RunBody) -> InvocationLog:
    """Starts the run and waits until its user message is stored (its id is known)."""
    server = server_of(request)
    runner = await runner_for(request, body.app_name)
    # No read of the session here: the run reads it once, and a missing session fails the
    # run before it stores anything (SessionNotFoundError answers 404, errors.py).
    held = await hold_turn(server, body.app_name, body.user_id, body.session_id)
    try:
        log = await _start_here(request, server, runner, body)
    finally:
        # The run stored its user message, so it holds the session's own turn lock (which
        # it gives back before its log ends): the held one is not needed any longer.
        await release_turn(held)
    if server.broker is not None:
        await server.broker.publish(log)
    return log


async def _start_here(
    request: Request, server: Server, runner: Runner, body: RunBody
) -> InvocationLog:
    log = await _start_once(request, server, runner, body)
    if log.invocation_id is None and log.failure_status == 503:
        # The store failed before the run stored anything (a connection the database
        # dropped, none to spare): once more, then the client is told to try again.
        log = await _start_once(request, server, runner, body)
    if log.invocation_id is None:
        _raise_failure(log)
    return log


async def _start_once(
    request: Request, server: Server, runner: Runner, body: RunBody
) -> InvocationLog:
    """Starts the run and waits until it has stored its user message or failed before."""
    try:
        with continued_trace(request.headers):  # the run is scheduled in the caller's trace
            log = server.registry.start(
                runner,
                user_id=body.user_id,
                session_id=body.session_id,
                new_message=body.new_message,
                run_config=body.run_config(server.limits.run_timeout),
                state_delta=body.state_delta,
                invocation_id=body.invocation_id,
            )
    except SessionBusyError as exc:
        raise HTTPException(409, str(exc)) from exc
    except TooManyRunsError as exc:
        raise HTTPException(503, str(exc)) from exc
    except ConfigurationError as exc:
        raise HTTPException(400, str(exc)) from exc
    try:
        await log.started(server.limits.start_timeout)
    except TimeoutError as exc:
        server.registry.cancel(log)
        raise HTTPException(504, "the run did not start in time; it was cancelled") from exc
    return log


def _raise_failure(log: InvocationLog) -> NoReturn:
    status = log.failure_status
    retry = {"Retry-After": "1"} if status == 503 else None  # the same request may succeed later
    raise HTTPException(status, log.error or log.status, headers=retry)


async def _wait_end(log: InvocationLog) -> None:
    while not log.finished:
        await log.wait(None)


async def run(request: Request) -> Response:
    """ADK ``/run``: waits for the end; the run's events, without the user message."""
    body = await _body(request)
    log = await _start(request, body)
    await _wait_end(log)
    if log.status in ("failed", "timeout"):
        _raise_failure(log)
    entries = log.snapshot()
    if entries and entries[0].seq == 1:
        events = [e.event for e in entries if not e.partial]
    else:  # the log dropped its oldest entries: the store has every stored event
        session = await find_session(request, body.app_name, body.user_id, body.session_id)
        events = _of_invocation(session.events, log.invocation_id)
    return json_response([event.to_dict() for event in events])


def _of_invocation(events: list[Event], invocation_id: str | None) -> list[Event]:
    return [e for e in events if e.invocation_id == invocation_id and e.author != "user"]


async def run_sse(request: Request) -> Response:
    """ADK ``/run_sse``: ``data: <Event JSON>`` frames until the run ends."""
    body = await _body(request)
    log = await _start(request, body)
    limits = server_of(request).limits
    split = body.function_call_event_id is None
    return sse_response(adk_frames(log, limits.batch_events, split_artifacts=split))


# -- invocations ----------------------------------------------------------------------------
def _path_ids(request: Request) -> dict[str, str]:
    params = request.path_params
    user_path(request, check_id(params["user"], "the user id"))
    return {
        "app_name": check_id(params["app"], "the app name"),
        "user_id": params["user"],
        "session_id": check_id(params["sid"], "the session id"),
    }


async def start_invocation(request: Request) -> Response:
    """202 ``{"invocation_id"}``; the run goes on whether or not anyone listens."""
    body = await _body(request, **_path_ids(request))
    log = await _start(request, body)
    url = f"{request.url.path}/{log.invocation_id}/events"
    return json_response(_status(log), 202, headers={"Location": url})


async def _log(request: Request) -> InvocationLog | RemoteInvocation | Tombstone:
    """The invocation named in the path: run here, evicted here (what is left of it), or
    (with a broker) run by another server; 404 unless it belongs to the path's session."""
    ids = _path_ids(request)
    key = (ids["app_name"], ids["user_id"], ids["session_id"])
    server = server_of(request)
    iid = check_id(request.path_params["iid"], "the invocation id")
    log = server.registry.get(iid) or server.registry.tombstone(iid)
    if log is None and server.broker is not None:
        try:
            remote = await server.broker.find(iid)
        except BrokerUnavailableError as exc:
            raise HTTPException(503, str(exc), headers={"Retry-After": "1"}) from exc
        if remote is not None and remote.key == key:
            return remote
    if log is None or log.key != key:
        raise not_found("invocation")
    return log


def _status(log: InvocationLog | RemoteInvocation) -> dict[str, Any]:
    if isinstance(log, RemoteInvocation):
        return log.status_dict()
    return {
        "invocation_id": log.invocation_id,
        "status": log.status,
        "error": log.error,
        "last_event_id": log.head,
        "created_at": log.created_at,
        "finished_at": log.finished_at,
    }


async def list_invocations(request: Request) -> Response:
    """The session's invocations, oldest first: those this server holds and, with a
    broker, those Redis knows of every other server."""
    ids = _path_ids(request)
    key = (ids["app_name"], ids["user_id"], ids["session_id"])
    server = server_of(request)
    listed = {log.invocation_id: _status(log) for log in server.registry.of_session(key)}
    if server.broker is not None:
        try:
            remote = await server.broker.of_session(key)
        except Exception as exc:
            raise HTTPException(503, f"the broker is unreachable: {exc}") from exc
        for found in remote:
            listed.setdefault(found.invocation_id, found.status_dict())
    ordered = sorted(listed.values(), key=lambda status: status["created_at"] or 0.0)
    return json_response(ordered)


async def invocation_status(request: Request) -> Response:
    found = await _log(request)
    if isinstance(found, Tombstone):
        return json_response(tombstone_status(found))
    return json_response(_status(found))


def _cursor(request: Request) -> int:
    """``after``, else ``Last-Event-ID``, else 0; each one given must be a cursor (an empty
    Last-Event-ID is none, as an EventSource that has read no id sends it)."""
    header = request.headers.get("last-event-id", "")
    from_header = parse_cursor(header) if header else 0
    raw = request.query_params.get("after")
    return parse_cursor(raw) if raw is not None else from_header


async def invocation_events(request: Request) -> Response:
    """SSE from the event after cursor ``after`` (or ``Last-Event-ID``); ends with ``end``."""
    log = await _log(request)
    after = _cursor(request)
    server = server_of(request)
    limits = server.limits
    if isinstance(log, RemoteInvocation):
        assert server.broker is not None
        if log.stored is not None:  # ended before anyone elsewhere read it: from the store
            log = _tombstone_of(log)
        else:
            if log.finished_at is None:
                await _want(server, log.invocation_id)
            frames = remote_frames(
                server.broker, log.invocation_id, after, limits.heartbeat, limits.batch_events
            )
            return sse_response(frames)
    if isinstance(log, Tombstone):  # its log was evicted: the store has its events
        app_name, user, sid = log.key
        session = await find_session(request, app_name, user, sid)
        entries = stored_entries(session.events, log)
        return sse_response(replay_frames(entries, log, after, limits.batch_events))
    return sse_response(invocation_frames(log, after, limits.heartbeat, limits.batch_events))


async def _want(server: Server, invocation_id: str) -> None:
    """Asks the owner to publish the run's events (it publishes only what is read)."""
    assert server.broker is not None
    try:
        await server.broker.want(invocation_id)
    except Exception as exc:
        raise HTTPException(503, f"the broker is unreachable: {exc}") from exc


def _tombstone_of(remote: RemoteInvocation) -> Tombstone:
    stored = remote.stored or []
    plain = all(seq == index for index, seq in enumerate(stored, 1))
    return Tombstone(
        key=remote.key,
        invocation_id=remote.invocation_id,
        status=remote.status,
        error=remote.error,
        created_at=remote.created_at or 0.0,
        finished_at=remote.finished_at or 0.0,
        head=remote.head,
        stored_seqs=None if plain else array("q", stored),
    )


async def cancel_invocation(request: Request) -> Response:
    """202 when the cancel started; 200 with the final status when the run had ended."""
    log = await _log(request)
    if isinstance(log, RemoteInvocation):
        return await remote_cancel(server_of(request), log)
    if isinstance(log, Tombstone):
        return json_response(tombstone_status(log), 200)
    started = server_of(request).registry.cancel(log)
    return json_response(_status(log), 202 if started else 200)


async def remote_cancel(server: Server, log: RemoteInvocation) -> Response:
    """Asks the owner through the broker: 202, or 200 with the status when it had ended."""
    if log.finished_at is not None:
        return json_response(_status(log), 200)
    assert server.broker is not None
    try:
        await server.broker.cancel(log.invocation_id)
    except Exception as exc:
        raise HTTPException(503, f"the cancel could not be passed on: {exc}") from exc
    return json_response(_status(log), 202)


_INVOCATIONS = "/apps/{app}/users/{user}/sessions/{sid}/invocations"
routes = [
    Route("/run", run, methods=["POST"]),
    Route("/run_sse", run_sse, methods=["POST"]),
    Route(_INVOCATIONS, start_invocation, methods=["POST"]),
    Route(_INVOCATIONS, list_invocations, methods=["GET"]),
    Route(_INVOCATIONS + "/{iid}:cancel", cancel_invocation, methods=["POST"]),
    Route(_INVOCATIONS + "/{iid}/events", invocation_events, methods=["GET"]),
    Route(_INVOCATIONS + "/{iid}", invocation_status, methods=["GET"]),
]
