"""Event compaction: old events of a session replaced, in model requests, by a summary.

``App(events_compaction_config=EventsCompactionConfig(...))`` turns it on. One compaction,
followed through the modules of this package:

1. ``config.py``: :class:`EventsCompactionConfig` says when (a sliding window of invocations,
   a prompt-token threshold, or both) and with which summarizer.
2. ``compact.py``: after an invocation's own events were stored and emitted, the Runner calls
   :func:`compact_session` (the session's next run waits for it, so it sees the summary).
3. ``triggers.py``: :func:`events_to_compact` says whether a trigger fired and which events
   are chosen (whole invocations for the window; all but the newest events for tokens).
4. ``summarizer.py``: the summarizer turns them into one event whose ``actions.compaction`` is
   an :class:`~adk_rx.events.EventCompaction` (the time range and the summary), which is
   stored, not emitted. :class:`LlmEventSummarizer` asks a model; ``default.py`` gives the
   tree's own model when the config names no summarizer.
5. ``contents.py``: every later model request carries the summary in place of the events of
   its range (:func:`apply_compactions`, used when the flow builds the request's contents);
   state and artifacts are untouched, since they live in the session, not in its events.

A summarizer (or store) that fails is logged and skipped: the session stays as it was and
the invocation does not fail.
"""

from adk_rx.compaction.compact import compact_session
from adk_rx.compaction.config import EventsCompactionConfig
from adk_rx.compaction.contents import apply_compactions
from adk_rx.compaction.summarizer import BaseEventSummarizer, LlmEventSummarizer
from adk_rx.compaction.triggers import events_to_compact

__all__ = [
    "BaseEventSummarizer",
    "EventsCompactionConfig",
    "LlmEventSummarizer",
    "apply_compactions",
    "compact_session",
    "events_to_compact",
]
