"""The apps of an agents folder, each with one Runner, built on first use."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.auth import BaseCredentialService, InMemoryCredentialService
from adk_rx.errors import AgentLoadError, AppNotFoundError
from adk_rx.loading.loader import discover_apps, import_traceback, load_app
from adk_rx.memory.base import BaseMemoryService
from adk_rx.runner import Runner
from adk_rx.sessions.base import BaseSessionService

__all__ = ["AppNotFoundError", "AppRunners", "load_traceback"]

_log = logging.getLogger("adk_rx.server")


def load_traceback(error: AgentLoadError) -> str | None:
    """The traceback of the user's code that made an app fail to load (None: no code raised,
    e.g. no ``root_agent``); the user's own frames only, as ``adk-rx run`` prints it."""
    return import_traceback(error.__cause__) if error.__cause__ is not None else None


class AppRunners:
    """One Runner per app, sharing the server's services; agents are imported lazily."""

    def __init__(
        self,
        agents_dir: Path,
        *,
        session_service: BaseSessionService,
        artifact_service: BaseArtifactService,
        memory_service: BaseMemoryService,
        credential_service: BaseCredentialService | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.agents_dir = agents_dir
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.memory_service = memory_service
        self.credential_service = credential_service or InMemoryCredentialService()
        self._lock = threading.Lock()
        self._runners: dict[str, Runner] = {}

    def names(self) -> list[str]:
        """The app names, sorted (the folder is read again each time)."""
        return list(discover_apps(self.agents_dir))

    async def get(self, name: str) -> Runner:
        """The app's Runner; its agent is imported (off the loop) on first use.

        Raises:
            AppNotFoundError: no such app.
            AgentLoadError: the app fails to import (logged with its traceback, each time:
                the next request imports it again, so a fixed app loads without a restart).
        """
        with self._lock:
            runner = self._runners.get(name)
        if runner is not None:
            return runner
        if name not in discover_apps(self.agents_dir):
            raise AppNotFoundError(f"no app named {name!r}")
        try:
            app = await asyncio.to_thread(load_app, self.agents_dir, name)
        except AgentLoadError as exc:
            traceback = load_traceback(exc)
            _log.error(
                "app %r failed to load: %s%s",
                name,
                exc,
                "\n" + traceback.rstrip() if traceback else "",
            )
            raise
        with self._lock:
            runner = self._runners.get(name)
            if runner is None:
                runner = Runner(
                    app=app,
                    session_service=self.session_service,
                    artifact_service=self.artifact_service,
                    memory_service=self.memory_service,
                    credential_service=self.credential_service,
                    tracer_provider=self.tracer_provider,
                    meter_provider=self.meter_provider,
                )
                self._runners[name] = runner
        return runner

    def close(self, timeout: float | None = None) -> None:
        """Closes every Runner: their runs get ``timeout`` seconds in all to end, the rest
        are cancelled (see ``Runner.close``)."""
        with self._lock:
            runners, self._runners = list(self._runners.values()), {}
        deadline = None if timeout is None else time.monotonic() + timeout
        for runner in runners:
            runner.close(None if deadline is None else max(0.0, deadline - time.monotonic()))
