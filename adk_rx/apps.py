"""App: the home of an application's root agent, its plugins and its run-time policies.

An :class:`App` names the application (sessions are stored under that name) and carries what
applies to every invocation of it: the plugins, whether an invocation can be resumed
(:class:`ResumabilityConfig`), when old events are summarised
(:class:`~adk_rx.compaction.EventsCompactionConfig`, re-exported here) and whether sessions
go to memory by themselves (:class:`MemoryConfig`), and whether the stable prefix of model
requests is cached (:class:`~adk_rx.models.context_cache.ContextCacheConfig`, re-exported here).
``Runner(app=app, session_service=...)`` runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from adk_rx.agents.base import BaseAgent
from adk_rx.compaction.config import EventsCompactionConfig
from adk_rx.errors import ConfigurationError
from adk_rx.models.context_cache import ContextCacheConfig
from adk_rx.plugins import BasePlugin
from adk_rx.pricing import Pricing

__all__ = [
    "App",
    "ContextCacheConfig",
    "EventsCompactionConfig",
    "MemoryConfig",
    "ResumabilityConfig",
]


@dataclass(frozen=True, slots=True)
class ResumabilityConfig:
    """Whether invocations of the app can be resumed.

    Attributes:
        is_resumable: agents record their progress in the event log (``agent_state`` and
            ``end_of_agent`` events), and ``Runner.run_async(..., invocation_id=ID)``
            continues invocation ID where it stopped.
    """

    is_resumable: bool = False


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """How the Runner uses its memory service.

    Attributes:
        add_session_after_invocation: after each invocation that ends normally, the Runner
            adds the session to its memory service (``add_session_to_memory``) before the run
            completes, so the next turn can recall it. A memory service that fails is logged;
            the run still succeeds. Needs ``Runner(memory_service=...)``.
    """

    add_session_after_invocation: bool = False


def _check_app_name(name: Any) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigurationError(
            f"invalid app name {name!r}: an app name must be a Python identifier "
            "(letters, digits and underscores, not starting with a digit)"
        )
    if name == "user":
        raise ConfigurationError("an app cannot be named 'user'")
    return name


@dataclass(frozen=True, slots=True)
class App:
    """An application: a named root agent with its plugins and policies.

    Args:
        name: the app name sessions are stored under (a Python identifier, not ``"user"``).
        root_agent: the agent tree's root.
        plugins: plugins applied to every invocation, in order.
        events_compaction_config: when old events are summarised (None: never).
        resumability_config: whether invocations can be resumed (None: not resumable).
        memory_config: how the Runner uses its memory service (None: sessions are added to
            memory only when asked).
        context_cache_config: cache the stable prefix of every model request (static
            instruction, tools, leading history) where the provider can (None: no explicit
            caching).
        pricing: the prices of the models' tokens (``adk_rx.usage.Pricing``): ``adk-rx run``
            shows each turn's cost, telemetry records each model call's cost, and a run whose
            RunConfig has no pricing of its own is priced with it.
    """

    name: str
    root_agent: BaseAgent
    plugins: tuple[BasePlugin, ...] = field(default=())
    events_compaction_config: EventsCompactionConfig | None = None
    resumability_config: ResumabilityConfig | None = None
    memory_config: MemoryConfig | None = None
    context_cache_config: ContextCacheConfig | None = None
    pricing: Pricing | None = None

    def __init__(
        self,
        *,
        name: str,
        root_agent: BaseAgent,
        plugins: Sequence[BasePlugin] | None = None,
        events_compaction_config: EventsCompactionConfig | None = None,
        resumability_config: ResumabilityConfig | None = None,
        memory_config: MemoryConfig | None = None,
        context_cache_config: ContextCacheConfig | None = None,
        pricing: Pricing | None = None,
    ) -> None:
        if not isinstance(root_agent, BaseAgent):
            raise ConfigurationError(
                f"root_agent must be a BaseAgent, got {type(root_agent).__name__}"
            )
        for plugin in plugins or ():
            if not isinstance(plugin, BasePlugin):
                raise ConfigurationError(f"plugins must be BasePlugins, got {plugin!r}")
        if events_compaction_config is not None and not isinstance(
            events_compaction_config, EventsCompactionConfig
        ):
            raise ConfigurationError("events_compaction_config must be an EventsCompactionConfig")
        if resumability_config is not None and not isinstance(
            resumability_config, ResumabilityConfig
        ):
            raise ConfigurationError("resumability_config must be a ResumabilityConfig")
        if memory_config is not None and not isinstance(memory_config, MemoryConfig):
            raise ConfigurationError("memory_config must be a MemoryConfig")
        if context_cache_config is not None and not isinstance(
            context_cache_config, ContextCacheConfig
        ):
            raise ConfigurationError("context_cache_config must be a ContextCacheConfig")
        if pricing is not None and not isinstance(pricing, Pricing):
            raise ConfigurationError("pricing must be an adk_rx.usage.Pricing")
        set_ = object.__setattr__
        set_(self, "name", _check_app_name(name))
        set_(self, "root_agent", root_agent)
        set_(self, "plugins", tuple(plugins or ()))
        set_(self, "events_compaction_config", events_compaction_config)
        set_(self, "resumability_config", resumability_config)
        set_(self, "memory_config", memory_config)
        set_(self, "context_cache_config", context_cache_config)
        set_(self, "pricing", pricing)

    @property
    def is_resumable(self) -> bool:
        """True when invocations of the app can be resumed."""
        config = self.resumability_config
        return config is not None and config.is_resumable

    def replace(self, **changes: Any) -> App:
        """Returns a copy with the given fields changed."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields.update(changes)
        return App(**fields)
