"""Which events of a session still count after ``Runner.rewind`` (google-adk's rule).

A rewind is an event whose ``actions.rewind_before_invocation_id`` names an invocation X: it
and every event from X's first event up to it no longer count. Walking backward, a rewind
jumps to X's first event, so a rewind that was itself rewound does not count either. The
model's history and the choice of the agent that takes the next turn read
:func:`live_events`; the stored events stay as they were.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_rx.events import Event

__all__ = ["has_rewind", "live_events"]


def has_rewind(events: Sequence[Event]) -> bool:
    """True when one of ``events`` is a rewind."""
    return any(e.actions.rewind_before_invocation_id for e in events)


def live_events(events: Sequence[Event]) -> list[Event]:
    """``events`` without the rewound invocations and the rewind events, in order."""
    if not has_rewind(events):
        return list(events)
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.invocation_id and event.invocation_id not in first:
            first[event.invocation_id] = index
    kept: list[Event] = []
    index = len(events) - 1
    while index >= 0:
        event = events[index]
        target = event.actions.rewind_before_invocation_id
        if target:
            start = first.get(target)
            if start is not None and start < index:
                index = start
        else:
            kept.append(event)
        index -= 1
    kept.reverse()
    return kept
