"""When a session is compacted, and which events: the two triggers of EventsCompactionConfig.

* sliding window: once ``compaction_interval`` invocations were stored since the last
  compacted range, those invocations and the ``overlap_size`` before them are chosen;
* token threshold: once the last model response reports more than ``token_threshold`` prompt
  tokens, every event but the newest ``event_retention_size`` is chosen (the previous summary
  is rolled into the new one).
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_rx.compaction.config import EventsCompactionConfig
from adk_rx.events import Event

__all__ = ["events_to_compact"]


def _since_last_compaction(events: Sequence[Event]) -> tuple[Event | None, list[Event]]:
    last: Event | None = None
    for event in events:
        if event.actions.compaction is not None and (
            last is None
            or event.actions.compaction.end_timestamp > last.actions.compaction.end_timestamp  # type: ignore[union-attr]
        ):
            last = event
    if last is None:
        return None, [e for e in events if not e.partial]
    end = last.actions.compaction.end_timestamp  # type: ignore[union-attr]
    return last, [e for e in events if e.actions.compaction is None and e.timestamp > end]


def _window(events: Sequence[Event], config: EventsCompactionConfig) -> list[Event] | None:
    assert config.compaction_interval is not None and config.overlap_size is not None
    _, fresh = _since_last_compaction(events)
    new_ids = list(dict.fromkeys(e.invocation_id for e in fresh))
    if len(new_ids) < config.compaction_interval:
        return None
    all_ids = list(dict.fromkeys(e.invocation_id for e in events if e.actions.compaction is None))
    first = all_ids.index(new_ids[0])
    chosen = set(all_ids[max(0, first - config.overlap_size) :]) | set(new_ids)
    return [e for e in events if e.actions.compaction is None and e.invocation_id in chosen]


def _prompt_tokens(events: Sequence[Event]) -> int | None:
    for event in reversed(events):
        usage = event.usage_metadata
        if usage is not None and usage.prompt_token_count is not None:
            return usage.prompt_token_count
    return None


def _tokens(events: Sequence[Event], config: EventsCompactionConfig) -> list[Event] | None:
    assert config.token_threshold is not None and config.event_retention_size is not None
    tokens = _prompt_tokens(events)
    if tokens is None or tokens <= config.token_threshold:
        return None
    previous, fresh = _since_last_compaction(events)
    cut = len(fresh) - config.event_retention_size
    # Never keep a response whose call is summarised away: move the cut before the call.
    while 0 < cut < len(fresh) and fresh[cut].get_function_responses():
        cut -= 1
    if cut <= 0:
        return None
    chosen = fresh[:cut]
    return [previous, *chosen] if previous is not None else chosen


def events_to_compact(
    events: Sequence[Event], config: EventsCompactionConfig
) -> list[Event] | None:
    """The events a compaction should summarise now, or None (no trigger fired).

    The sliding window is checked first, then the token threshold. Events come whole
    invocations at a time for the window; the token trigger keeps the newest
    ``event_retention_size`` events (and rolls the previous summary into the new one).
    """
    stored = [e for e in events if not e.partial]
    if config.has_window:
        chosen = _window(stored, config)
        if chosen:
            return chosen
    if config.has_token_trigger:
        return _tokens(stored, config)
    return None
