"""App: the home of an application's root agent, its plugins and its run-time policies.

An :class:`App` names the application (sessions are stored under that name) and carries what
applies to every invocation of it: the plugins, whether an invocation can be resumed
(:class:`ResumabilityConfig`), and when old events are summarised
(:class:`EventsCompactionConfig`). ``Runner(app=app, session_service=...)`` runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.plugins import BasePlugin

if TYPE_CHECKING:
    from adk_rx.compaction import BaseEventSummarizer

__all__ = ["App", "EventsCompactionConfig", "ResumabilityConfig"]


@dataclass(frozen=True, slots=True)
class ResumabilityConfig:
    """Whether invocations of the app can be resumed.

    Attributes:
        is_resumable: agents record their progress in the event log (``agent_state`` and
            ``end_of_agent`` events), and ``Runner.run_async(..., invocation_id=ID)``
            continues invocation ID where it stopped.
    """

    is_resumable: bool = False


def _positive(name: str, value: Any, *, zero_ok: bool = False) -> None:
    if value is None:
        return
    low = 0 if zero_ok else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigurationError(f"{name} must be an int >= {low}, got {value!r}")


@dataclass(frozen=True, slots=True)
class EventsCompactionConfig:
    """When the Runner replaces old events of a session by a summary.

    Two triggers, each set as a pair (at least one pair):

    * sliding window: after every ``compaction_interval`` invocations not yet compacted,
      they are summarised together with the ``overlap_size`` invocations before them;
    * token threshold: once the last model response reports more than ``token_threshold``
      prompt tokens, every event but the newest ``event_retention_size`` is summarised.

    Attributes:
        compaction_interval: new invocations that trigger a sliding-window compaction.
        overlap_size: earlier invocations summarised again with them (0 for none).
        summarizer: a :class:`~adk_rx.compaction.BaseEventSummarizer`; by default an
            :class:`~adk_rx.compaction.LlmEventSummarizer` on the root agent's model.
        token_threshold: prompt tokens above which the token trigger fires.
        event_retention_size: newest events the token trigger keeps as they are.
    """

    compaction_interval: int | None = None
    overlap_size: int | None = None
    summarizer: BaseEventSummarizer | None = None
    token_threshold: int | None = None
    event_retention_size: int | None = None

    def __post_init__(self) -> None:
        window = (self.compaction_interval, self.overlap_size)
        tokens = (self.token_threshold, self.event_retention_size)
        for pair, names in (
            (window, "compaction_interval and overlap_size"),
            (tokens, "token_threshold and event_retention_size"),
        ):
            if (pair[0] is None) != (pair[1] is None):
                raise ConfigurationError(f"set {names} together (one of them is missing)")
        if window[0] is None and tokens[0] is None:
            raise ConfigurationError(
                "EventsCompactionConfig needs compaction_interval and overlap_size, or "
                "token_threshold and event_retention_size (or both pairs)"
            )
        _positive("compaction_interval", self.compaction_interval)
        _positive("overlap_size", self.overlap_size, zero_ok=True)
        _positive("token_threshold", self.token_threshold)
        _positive("event_retention_size", self.event_retention_size, zero_ok=True)

    @property
    def has_window(self) -> bool:
        """True when the sliding-window trigger is set."""
        return self.compaction_interval is not None

    @property
    def has_token_trigger(self) -> bool:
        """True when the token trigger is set."""
        return self.token_threshold is not None


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
    """

    name: str
    root_agent: BaseAgent
    plugins: tuple[BasePlugin, ...] = field(default=())
    events_compaction_config: EventsCompactionConfig | None = None
    resumability_config: ResumabilityConfig | None = None

    def __init__(
        self,
        *,
        name: str,
        root_agent: BaseAgent,
        plugins: Sequence[BasePlugin] | None = None,
        events_compaction_config: EventsCompactionConfig | None = None,
        resumability_config: ResumabilityConfig | None = None,
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
        set_ = object.__setattr__
        set_(self, "name", _check_app_name(name))
        set_(self, "root_agent", root_agent)
        set_(self, "plugins", tuple(plugins or ()))
        set_(self, "events_compaction_config", events_compaction_config)
        set_(self, "resumability_config", resumability_config)

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
