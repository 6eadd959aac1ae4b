"""EventsCompactionConfig: when the Runner replaces old events of a session by a summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adk_rx.errors import ConfigurationError

if TYPE_CHECKING:
    from adk_rx.compaction.summarizer import BaseEventSummarizer

__all__ = ["EventsCompactionConfig"]


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
        summarizer: a :class:`~adk_rx.compaction.summarizer.BaseEventSummarizer`; by default an
            :class:`~adk_rx.compaction.summarizer.LlmEventSummarizer` on the root agent's model.
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
