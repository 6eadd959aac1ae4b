"""ADK's session reads and artifact reads (writes: :mod:`.adk_routes_sessions`)."""

from __future__ import annotations

from typing import Any, TypeVar

from reactivex import Observable
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.errors import ConfigurationError
from adk_rx.rx._engine.awaitable import gather
from adk_rx.sessions.session import Session

from ..edge.bodies import session_json
from ..edge.body_reader import read_json
from ..edge.validation import check_artifact_name, check_id
from ..shared import json_response, not_found, runner_for, server_of, user_path

__all__ = ["artifact_call", "find_session", "ids_of", "json_body", "routes"]

T = TypeVar("T")


async def ids_of(request: Request) -> tuple[str, str]:
    app_name = check_id(request.path_params["app"], "the app name")
    user = check_id(request.path_params["user"], "the user id")
    user_path(request, user)
    await runner_for(request, app_name)  # 404 for an unknown app
    return app_name, user


async def find_session(request: Request, app_name: str, user: str, sid: str) -> Session:
    """The stored session, or 404 (also when it is another user's)."""
    check_id(sid, "the session id")
    found = await gather(
        server_of(request).sessions.get_session(app_name=app_name, user_id=user, session_id=sid)
    )
    if not found:
        raise not_found(f"session {sid!r}")
    return found[0]


async def json_body(request: Request) -> dict[str, Any]:
    data = await read_json(request, server_of(request).limits)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HTTPException(400, "the body must be a JSON object")
    return data


async def list_sessions(request: Request) -> Response:
    app_name, user = await ids_of(request)
    found = await gather(server_of(request).sessions.list_sessions(app_name=app_name, user_id=user))
    sessions = found[0].sessions if found else []
    ordered = sorted(sessions, key=lambda s: s.last_update_time, reverse=True)
    return json_response([session_json(s, with_events=False) for s in ordered])


async def get_session(request: Request) -> Response:
    app_name, user = await ids_of(request)
    session = await find_session(request, app_name, user, request.path_params["sid"])
    return json_response(session_json(session))


# -- artifacts ------------------------------------------------------------------------------
async def artifact_call(source: Observable[T]) -> list[T]:
    """What an artifact service call emits; 400 for a name or id the service cannot take
    (the file store refuses ``.``, ``..`` and names longer than the file system takes)."""
    try:
        return await gather(source)
    except ConfigurationError as exc:
        raise HTTPException(400, str(exc)) from exc


async def _artifact_ids(request: Request) -> dict[str, str]:
    app_name, user = await ids_of(request)
    sid = request.path_params["sid"]
    await find_session(request, app_name, user, sid)
    return {"app_name": app_name, "user_id": user, "session_id": sid}


async def list_artifacts(request: Request) -> Response:
    ids = await _artifact_ids(request)
    service = server_of(request).runners.artifact_service
    found = await artifact_call(service.list_artifact_keys(**ids))
    return json_response(found[0] if found else [])


async def artifact_versions(request: Request) -> Response:
    ids = await _artifact_ids(request)
    found = await artifact_call(
        server_of(request).runners.artifact_service.list_versions(
            **ids, filename=check_artifact_name(request.path_params["name"])
        )
    )
    return json_response(found[0] if found else [])


async def load_artifact(request: Request) -> Response:
    ids = await _artifact_ids(request)
    raw = request.query_params.get("version")
    try:
        version = int(raw) if raw is not None else None
    except ValueError as exc:
        raise HTTPException(400, "version must be an integer") from exc
    name = check_artifact_name(request.path_params["name"])
    service = server_of(request).runners.artifact_service
    found = await artifact_call(service.load_artifact(**ids, filename=name, version=version))
    if not found:
        raise not_found(f"artifact {name!r}")
    return json_response(found[0].model_dump(mode="json", by_alias=True, exclude_none=True))


_SESSIONS = "/apps/{app}/users/{user}/sessions"
routes = [
    Route(_SESSIONS, list_sessions, methods=["GET"]),
    Route(_SESSIONS + "/{sid}", get_session, methods=["GET"]),
    Route(_SESSIONS + "/{sid}/artifacts", list_artifacts, methods=["GET"]),
    Route(_SESSIONS + "/{sid}/artifacts/{name}", load_artifact, methods=["GET"]),
    Route(_SESSIONS + "/{sid}/artifacts/{name}/versions", artifact_versions, methods=["GET"]),
]
