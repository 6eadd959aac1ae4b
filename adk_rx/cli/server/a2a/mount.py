"""The A2A routes of ``adk-rx api-server --a2a``: every app at ``/a2a/{app_name}``.

* ``GET /a2a/{app}/.well-known/agent-card.json``: the app's agent card, naming this server's
  URL for the app as its JSON-RPC endpoint;
* ``POST /a2a/{app}`` (and ``/a2a/{app}/``): JSON-RPC, A2A 1.0's methods and 0.3's
  (``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``), answered by the
  SDK's dispatcher and request handler over :class:`~.runs.ServerRuns`.

The server's edge applies as to every route: the Host, Origin and token checks run first,
and a body is read bounded in bytes, time and shape (:mod:`..edge.body_reader`) before the
SDK parses it; a refused one answers a JSON-RPC error with the HTTP status of the refusal.
With tokens, the token's user is the authenticated A2A caller: its tasks are its own
(another user's task ids answer "task not found") and its sessions are its own. The A2A
routes are described by the agent card, A2A's own discovery, not by ``/openapi.json``.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.auth.user import UnauthenticatedUser, User
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Message

from adk_rx.a2a.card import agent_card, card_dict
from adk_rx.a2a.serve import CARD_PATH, request_handler
from adk_rx.runner import Runner

from ..edge.body_reader import read_json
from ..edge.validation import check_id
from ..errors import RequestRejectedError
from ..shared import runner_for, server_of
from .runs import ServerRuns

__all__ = ["A2aApps", "mount"]

_PARSE_ERROR, _INVALID_REQUEST = -32700, -32600


class _TokenUser(User):
    """The user a bearer token maps to: checked by the server, so authenticated."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Callers(DefaultServerCallContextBuilder):
    def build_user(self, request: Request) -> User:
        user = request.scope.get("state", {}).get("user")
        return _TokenUser(user) if isinstance(user, str) and user else UnauthenticatedUser()


class A2aApps:
    """One SDK request handler per app, made on its first request (and again when the
    app's Runner is rebuilt)."""

    def __init__(self) -> None:
        self._apps: dict[str, tuple[Runner, DefaultRequestHandler, JsonRpcDispatcher]] = {}

    def dispatcher(self, request: Request, runner: Runner) -> JsonRpcDispatcher:
        found = self._apps.get(runner.app_name)
        if found is not None and found[0] is runner:
            return found[2]
        card = agent_card(runner.services.app.root_agent, _url(request, runner.app_name))
        handler = request_handler(ServerRuns(server_of(request), runner), card)
        dispatcher = JsonRpcDispatcher(handler, context_builder=_Callers(), enable_v0_3_compat=True)
        self._apps[runner.app_name] = (runner, handler, dispatcher)
        return dispatcher

    async def aclose(self) -> None:
        """Drains the handlers' tasks (the server's shutdown; runs are cancelled by then)."""
        apps, self._apps = list(self._apps.values()), {}
        for _, handler, _ in apps:
            await handler.aclose()


def _url(request: Request, app_name: str) -> str:
    return f"{request.base_url}a2a/{app_name}"


async def _runner(request: Request) -> Runner:
    app_name = check_id(request.path_params["app"], "the app name")
    return await runner_for(request, app_name)


async def card(request: Request) -> Response:
    """The app's agent card (skills from its agent's tools and sub-agents)."""
    runner = await _runner(request)
    found = agent_card(runner.services.app.root_agent, _url(request, runner.app_name))
    return JSONResponse(card_dict(found))


def _rpc_error(status: int, code: int, message: str) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status)


async def rpc(request: Request) -> Response:
    """A2A JSON-RPC for the app: the body bounded first, then the SDK's dispatcher."""
    runner = await _runner(request)
    try:
        data: Any = await read_json(request, server_of(request).limits)
    except RequestRejectedError as exc:
        code = _PARSE_ERROR if exc.status == 400 else _INVALID_REQUEST
        return _rpc_error(exc.status, code, str(exc))
    body = json.dumps(data).encode()

    async def replay() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    apps: A2aApps = request.app.state.a2a
    dispatcher = apps.dispatcher(request, runner)
    return await dispatcher.handle_requests(Request(request.scope, replay))


mount = Mount(
    "/a2a",
    routes=[
        Route("/{app}" + CARD_PATH, card, methods=["GET"]),
        Route("/{app}", rpc, methods=["POST"]),
        Route("/{app}/", rpc, methods=["POST"]),
    ],
)
