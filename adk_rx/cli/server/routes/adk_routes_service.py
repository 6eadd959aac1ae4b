"""google-adk's service routes: apps, app info, version, health and the telemetry setting.

* ``GET /list-apps`` answers the app names; ``?detailed=true`` answers ``{"apps": [AppInfo]}``
  where an AppInfo is ``{name, rootAgentName, description, language, isComputerUse}``.
* ``GET /apps/{app}/app-info``: one AppInfo with ``agents``: agent name ->
  ``{name, description, instruction, tools: [{functionDeclarations: [...]}], sub_agents}``
  for the root agent and every LlmAgent below it.
* ``GET /version``: ``{version, language, language_version}`` (``version`` is adk_rx's).
* ``GET /health``: ``{"status": "ok"}``.
* ``GET|POST /config/telemetry``: adk_rx sends no usage telemetry, so the setting is always
  ``{"telemetry": false}``; a POST (which, as in google-adk, needs the
  ``X-Adk-Telemetry-Request: true`` header) is accepted and changes nothing.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import platform
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.tools.base import BaseTool

from ..shared import json_response, runner_for, server_of

__all__ = ["adk_rx_version", "agent_infos", "routes"]


def adk_rx_version() -> str:
    """The installed adk_rx version (``"unknown"`` when run from a source tree)."""
    try:
        return importlib.metadata.version("adk_rx")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _instruction(agent: LlmAgent) -> str:
    value: Any = agent.instruction
    if callable(value):
        return f"<InstructionProvider: {getattr(value, '__name__', type(value).__name__)}>"
    return value if isinstance(value, str) else ""


def _tools(agent: LlmAgent) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for tool in agent.tools:
        declaration = tool.declaration() if isinstance(tool, BaseTool) else None
        if declaration is not None:
            dumped = declaration.model_dump(mode="json", by_alias=True, exclude_none=True)
            tools.append({"functionDeclarations": [dumped]})
    return tools


def agent_infos(root: BaseAgent) -> dict[str, dict[str, Any]]:
    """google-adk's ``agents`` map: the root and every LlmAgent reachable through LlmAgents."""
    infos: dict[str, dict[str, Any]] = {}

    def visit(agent: LlmAgent) -> None:
        if agent.name in infos:
            return
        subs = [sub for sub in agent.sub_agents if isinstance(sub, LlmAgent)]
        for sub in subs:
            visit(sub)
        infos[agent.name] = {
            "name": agent.name,
            "description": agent.description,
            "instruction": _instruction(agent),
            "tools": _tools(agent),
            "sub_agents": [sub.name for sub in subs],
        }

    if isinstance(root, LlmAgent):
        visit(root)
    return infos


def _app_info(name: str, root: BaseAgent) -> dict[str, Any]:
    return {
        "name": name,
        "rootAgentName": root.name,
        "description": root.description,
        "language": "python",
        "isComputerUse": False,
    }


async def list_apps(request: Request) -> Response:
    """The app names; ``?detailed=true``: ``{"apps": [...]}`` (apps that fail to load left out)."""
    server = server_of(request)
    names = await asyncio.to_thread(server.runners.names)
    if request.query_params.get("detailed", "").lower() not in ("true", "1"):
        return json_response(names)
    apps: list[dict[str, Any]] = []
    for name in names:
        try:
            runner = await server.runners.get(name)
        except Exception:  # an app that fails to import is listed by name only
            continue
        apps.append(_app_info(name, runner.agent))
    return json_response({"apps": apps})


async def app_info(request: Request) -> Response:
    """One app's AppInfo with its ``agents`` (400 when the root agent is not an LlmAgent)."""
    name = request.path_params["app"]
    runner = await runner_for(request, name)
    if not isinstance(runner.agent, LlmAgent):
        raise HTTPException(400, "the root agent is not an LlmAgent")
    return json_response({**_app_info(name, runner.agent), "agents": agent_infos(runner.agent)})


async def version(_: Request) -> Response:
    return json_response(
        {
            "version": adk_rx_version(),
            "language": "python",
            "language_version": platform.python_version(),
        }
    )


async def health(_: Request) -> Response:
    return json_response({"status": "ok"})


async def get_telemetry(_: Request) -> Response:
    return json_response({"telemetry": False})


async def set_telemetry(request: Request) -> Response:
    if request.headers.get("x-adk-telemetry-request") != "true":
        raise HTTPException(400, "Forbidden: missing required security header")
    return json_response({"telemetry": False})


routes = [
    Route("/list-apps", list_apps, methods=["GET"]),
    Route("/apps/{app}/app-info", app_info, methods=["GET"]),
    Route("/version", version, methods=["GET"]),
    Route("/health", health, methods=["GET"]),
    Route("/config/telemetry", get_telemetry, methods=["GET"]),
    Route("/config/telemetry", set_telemetry, methods=["POST"]),
]
