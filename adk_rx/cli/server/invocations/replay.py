"""A finished invocation read back from its session's stored events.

Its log was evicted before the retention time ran out (see
:mod:`adk_rx.cli.server.invocations.retention`); its
:class:`~adk_rx.cli.server.invocations.retention.Tombstone` says how it ended and which
cursors its stored events had, so a reader gets the frames a live log would have given it
(partial events aside: they were never stored), with the same ids, so ``after=`` resumes
where the client stopped, and the same ``end`` frame.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from adk_rx.events import Event

from .retention import Tombstone
from .sse import end_frame_of

__all__ = ["replay_frames", "stored_entries", "tombstone_status"]


def stored_entries(events: Sequence[Event], tombstone: Tombstone) -> list[tuple[int, Event]]:
    """The invocation's stored events (its user message aside) with their log cursors."""
    mine = [
        event
        for event in events
        if event.invocation_id == tombstone.invocation_id and event.author != "user"
    ]
    seqs = tombstone.stored_seqs
    if seqs is None:
        return list(enumerate(mine, 1))
    entries: list[tuple[int, Event]] = []
    last = 0
    for index, event in enumerate(mine):
        # More stored events than the log saw should not happen; number them on after it.
        last = seqs[index] if index < len(seqs) else last + 1
        entries.append((last, event))
    return entries


def tombstone_status(tombstone: Tombstone) -> dict[str, Any]:
    """The invocation's status JSON, as for a live log."""
    return {
        "invocation_id": tombstone.invocation_id,
        "status": tombstone.status,
        "error": tombstone.error,
        "last_event_id": tombstone.head,
        "created_at": tombstone.created_at,
        "finished_at": tombstone.finished_at,
    }


async def replay_frames(
    entries: list[tuple[int, Event]], tombstone: Tombstone, after: int, batch: int
) -> AsyncIterator[bytes]:
    """The invocations stream after cursor ``after``, from stored events, then ``end``."""
    pending = [(seq, event) for seq, event in entries if seq > after]
    for start in range(0, len(pending), batch):
        chunk = pending[start : start + batch]
        yield "".join(f"id: {seq}\ndata: {event.to_json()}\n\n" for seq, event in chunk).encode()
    yield end_frame_of(tombstone.invocation_id, tombstone.status, tombstone.error)
