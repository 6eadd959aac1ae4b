"""Event compaction: old events of a session replaced by a summary.

A summarizer turns a run of events into one compaction event: an event whose
``actions.compaction`` names the time range it covers and holds the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from reactivex import Observable

from adk_rx.events import Event

__all__ = ["BaseEventSummarizer"]


class BaseEventSummarizer:
    """Summarises events; a subclass implements :meth:`summarize_events`."""

    def summarize_events(self, events: Sequence[Event]) -> Observable[Event]:
        """Emits one compaction event covering ``events``, or nothing (a Maybe)."""
        raise NotImplementedError(f"{type(self).__name__} must implement summarize_events")
