"""What every route needs: the server's parts, the caller's user, JSON answers."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from adk_rx.errors import AgentLoadError, AppNotFoundError
from adk_rx.runner import Runner
from adk_rx.sessions.base import BaseSessionService

from .errors import AppLoadFailedError
from .invocations.registry import InvocationRegistry
from .limits import Limits
from .runners import AppRunners, load_traceback

if TYPE_CHECKING:
    from adk_rx.telemetry.span_store import SpanStore

    from .cluster.broker import Broker

__all__ = [
    "Server",
    "json_response",
    "not_found",
    "runner_for",
    "server_of",
    "user_path",
]


@dataclass(frozen=True, slots=True)
class Server:
    """The parts of one server app."""

    runners: AppRunners
    registry: InvocationRegistry
    limits: Limits
    web: bool
    data_dir: Path  # where the server writes: default sessions, artifacts, users' eval sets
    span_store: SpanStore | None = None  # recent spans, when the OpenTelemetry SDK is set up
    broker: Broker | None = None  # Redis, when several server processes share the sessions

    @property
    def sessions(self) -> BaseSessionService:
        return self.runners.session_service


def server_of(request: Request) -> Server:
    return request.app.state.server


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Standard JSON that tolerates values json cannot encode (state may hold any value).

    A value the library let into state (the server refuses them from clients) may be a
    NaN or an infinity; it is written as ``null``, as events write it, never as the
    ``NaN`` / ``Infinity`` that ``JSON.parse`` rejects.
    """
    try:
        body = _dumps(data)
    except ValueError:  # a non-finite float somewhere
        body = _dumps(_finite(data))
    return Response(body, status, headers=headers, media_type="application/json")


def _dumps(data: Any) -> str:
    return json.dumps(data, default=str, separators=(",", ":"), allow_nan=False)


def _finite(value: Any) -> Any:
    """``value`` with every NaN and infinity replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def not_found(what: str) -> HTTPException:
    return HTTPException(404, f"{what} not found")


def user_path(request: Request, user: str) -> None:
    """404 unless the caller's token (when tokens are on) belongs to ``user``.

    Another user's paths answer 404, like a session that does not exist, so they reveal
    nothing.
    """
    caller = request.scope.get("state", {}).get("user")
    if caller is not None and caller != user:
        raise not_found("session")


async def runner_for(request: Request, app_name: str) -> Runner:
    try:
        return await server_of(request).runners.get(app_name)
    except AppNotFoundError as exc:
        raise not_found(f"app {app_name!r}") from exc
    except AgentLoadError as exc:
        traceback = (load_traceback(exc) or "") if server_of(request).web else None
        raise AppLoadFailedError(f"app {app_name!r} failed to load: {exc}", traceback) from exc
