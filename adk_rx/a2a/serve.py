"""Serving an agent over A2A: :func:`to_a2a`, and the request handler the server mounts.

Both are the SDK's own server parts (its JSON-RPC dispatcher, request handler and task
store) around :class:`~adk_rx.a2a.executor.A2aAgentExecutor`: the SDK keeps each task and
its owner, the executor runs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import AgentCard
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from adk_rx.a2a.card import agent_card, card_dict
from adk_rx.a2a.executor import A2aAgentExecutor
from adk_rx.a2a.runs import RunnerRuns, RunStarter
from adk_rx.agents.base import BaseAgent
from adk_rx.apps import App
from adk_rx.runner import Runner
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.in_memory import InMemorySessionService

__all__ = ["CARD_PATH", "request_handler", "to_a2a"]

CARD_PATH = "/.well-known/agent-card.json"


def request_handler(
    runs: RunStarter, card: AgentCard, *, task_store: TaskStore | None = None
) -> DefaultRequestHandler:
    """The SDK's request handler over an executor of ``runs``; tasks kept per owner in
    ``task_store`` (default in memory)."""
    return DefaultRequestHandler(
        agent_executor=A2aAgentExecutor(runs),
        task_store=task_store or InMemoryTaskStore(),
        agent_card=card,
    )


def to_a2a(
    agent_or_app: BaseAgent | App,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    protocol: str = "http",
    runner: Runner | None = None,
    session_service: BaseSessionService | None = None,
    task_store: TaskStore | None = None,
) -> Starlette:
    """An ASGI app serving one agent (or app) over A2A.

    JSON-RPC at ``/`` (A2A 1.0's methods, and 0.3's ``message/send``, ``message/stream``,
    ``tasks/get``, ``tasks/cancel``) and the agent card at ``/.well-known/agent-card.json``.
    Each task is one run of the agent on ``runner`` (default: a Runner with
    ``session_service``, in memory by default); the context id is the session id.

    Args:
        agent_or_app: the agent, or an App (its plugins, resumability... apply).
        host, port, protocol: where the app will be reached: the card's URL.
        runner: the Runner to run on, instead of building one.
        session_service: the sessions of the Runner built here (default in memory).
        task_store: where the A2A tasks are kept (default in memory).

    Run it with uvicorn: ``uvicorn.run(to_a2a(root_agent, port=8001), port=8001)``.
    """
    if runner is None:
        sessions = session_service or InMemorySessionService()
        if isinstance(agent_or_app, App):
            runner = Runner(app=agent_or_app, session_service=sessions)
        else:
            runner = Runner(
                agent=agent_or_app, app_name=agent_or_app.name, session_service=sessions
            )
    agent = runner.services.app.root_agent
    card = agent_card(agent, f"{protocol}://{host}:{port}/")
    handler = request_handler(RunnerRuns(runner), card, task_store=task_store)
    served = card_dict(card)

    async def card_route(_: Request) -> Response:
        return JSONResponse(served)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await handler.aclose()

    routes = [
        Route(CARD_PATH, card_route, methods=["GET"]),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
