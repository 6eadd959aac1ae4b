"""After a turn: summarise the chosen events and store the summary, never failing the turn."""

from __future__ import annotations

import logging
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.compaction.config import EventsCompactionConfig
from adk_rx.compaction.summarizer import BaseEventSummarizer
from adk_rx.compaction.triggers import events_to_compact
from adk_rx.events import Event
from adk_rx.rx._engine import sync
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.rewind import live_events
from adk_rx.sessions.session import Session

__all__ = ["compact_session"]

log = logging.getLogger("adk_rx.compaction")


def compact_session(
    session: Session,
    service: BaseSessionService,
    config: EventsCompactionConfig,
    summarizer: BaseEventSummarizer,
) -> Observable[Event]:
    """Stores a compaction event when a trigger fires; emits it (or nothing).

    Never errors: a failing summarizer or store is logged on ``adk_rx.compaction`` and the
    session is left as it was.
    """

    def run(_: Any) -> Observable[Event]:
        # Rewound invocations are not summarised (google-adk's compaction skips them too).
        chosen = events_to_compact(live_events(session.events), config)
        if not chosen:
            return sync.empty()
        return summarizer.summarize_events(chosen).pipe(
            ops.take(1), ops.flat_map(lambda event: service.append_event(session, event))
        )

    def skip(error: Exception, _: Any) -> Observable[Event]:
        log.warning("compaction of session %s skipped: %r", session.id, error, exc_info=error)
        return sync.empty()

    return rx.defer(run).pipe(ops.catch(skip))
