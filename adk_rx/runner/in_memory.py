"""InMemoryRunner: a Runner whose sessions, artifacts and memory live in the process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adk_rx.agents.base import BaseAgent
from adk_rx.apps import App
from adk_rx.artifacts.in_memory import InMemoryArtifactService
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.plugins import BasePlugin
from adk_rx.runner.runner import Runner
from adk_rx.sessions.in_memory import InMemorySessionService

__all__ = ["InMemoryRunner"]


class InMemoryRunner(Runner):
    """A Runner with in-memory session, artifact and memory services.

    Args:
        agent: the root agent.
        app_name: defaults to the root agent's name.
        plugins: plugins applied to every invocation.
        app: an App instead of ``agent``, ``app_name`` and ``plugins``.
    """

    def __init__(
        self,
        agent: BaseAgent | None = None,
        app_name: str | None = None,
        plugins: Sequence[BasePlugin] | None = None,
        *,
        app: App | None = None,
        **kwargs: Any,
    ) -> None:
        if app is None and app_name is None and isinstance(agent, BaseAgent):
            app_name = agent.name
        super().__init__(
            app=app,
            app_name=app_name,
            agent=agent,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
            plugins=plugins,
            **kwargs,
        )
