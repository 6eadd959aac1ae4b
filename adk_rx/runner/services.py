"""TurnServices: what every turn of one Runner uses, built once and frozen.

The Runner's constructor checks its arguments and builds one :class:`TurnServices`; each
subscription of ``run_async`` / ``run_live`` is one turn that reads it, and every
:class:`~adk_rx.context.InvocationContext` of the turn references it as ``ctx.services`` (it is
the :class:`~adk_rx.services.InvocationServices` agents and tools see, with what only the
Runner needs besides: the app, telemetry, the summarizer, the per-session gates and the run
tracker).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adk_rx.runner.gates import SessionGates
from adk_rx.runner.shutdown import RunTracker
from adk_rx.services import InvocationServices

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.apps import App
    from adk_rx.artifacts.base import BaseArtifactService
    from adk_rx.compaction import BaseEventSummarizer
    from adk_rx.memory.base import BaseMemoryService
    from adk_rx.plugins import PluginManager
    from adk_rx.sessions.base import BaseSessionService
    from adk_rx.telemetry import Telemetry

__all__ = ["BuiltWith", "TurnServices"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnServices(InvocationServices):
    """The services of one Runner's turns (besides those of :class:`InvocationServices`).

    Attributes:
        app: the app: its root agent, plugins and policies (compaction, resumability).
        app_name: the app name sessions are stored under.
        telemetry: where the turns' spans and metrics go.
        summarizer: the compaction summarizer (None when the app does not compact).
        gates: one run at a time per session, in this process.
        runs: the runs waiting or running, and whether the Runner still takes runs.
    """

    app: App
    app_name: str
    telemetry: Telemetry
    summarizer: BaseEventSummarizer | None = None
    gates: SessionGates = field(default_factory=SessionGates)
    runs: RunTracker = field(default_factory=RunTracker)

    @property
    def root_agent(self) -> BaseAgent:
        """The root of the agent tree."""
        return self.app.root_agent


class BuiltWith:
    """What a Runner was built with, read from its :class:`TurnServices`.

    Attributes:
        services: what every turn of the Runner uses, frozen.
    """

    services: TurnServices

    @property
    def app_name(self) -> str:
        """The app the sessions belong to."""
        return self.services.app_name

    @property
    def agent(self) -> BaseAgent:
        """The root agent."""
        return self.services.app.root_agent

    @property
    def app(self) -> App:
        """The App run (one wrapping the root agent when none was given)."""
        return self.services.app

    @property
    def session_service(self) -> BaseSessionService:
        """Where sessions and events are stored."""
        return self.services.session_service

    @property
    def artifact_service(self) -> BaseArtifactService | None:
        """Where artifacts are stored, if anywhere."""
        return self.services.artifact_service

    @property
    def memory_service(self) -> BaseMemoryService | None:
        """Long-term memory, if any."""
        return self.services.memory_service

    @property
    def plugin_manager(self) -> PluginManager:
        """The plugins applied to every invocation."""
        return self.services.plugins

    @property
    def telemetry(self) -> Telemetry:
        """Where the runs' spans and metrics go."""
        return self.services.telemetry
