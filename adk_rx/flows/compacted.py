"""Model contents with compacted ranges replaced by their summaries.

A compaction event covers the events whose timestamps lie in ``[start_timestamp,
end_timestamp]``. A compaction whose range lies inside a later one's is superseded (the later
summary rolled it in). The events covered by the remaining compactions are left out; each
summary takes the place of the first event it covers. A function response whose call was
summarised away is left out too, so the request never answers a call it does not show.
"""

from __future__ import annotations

from google.genai import types

from adk_rx.events import Event, EventCompaction

__all__ = ["apply_compactions"]


def _effective(compactions: list[Event]) -> list[EventCompaction]:
    ranges = [c.actions.compaction for c in compactions if c.actions.compaction is not None]
    kept: list[EventCompaction] = []
    for i, one in enumerate(ranges):
        inside_later = any(
            other.start_timestamp <= one.start_timestamp
            and one.end_timestamp <= other.end_timestamp
            for other in ranges[i + 1 :]
        )
        if not inside_later:
            kept.append(one)
    return sorted(kept, key=lambda c: c.start_timestamp)


def apply_compactions(
    pairs: list[tuple[Event, types.Content]], compactions: list[Event]
) -> list[tuple[Event, types.Content]]:
    """``pairs`` (event, content sent for it) with compacted ranges replaced by summaries."""
    ranges = _effective(compactions)
    placed: set[int] = set()
    out: list[tuple[Event, types.Content]] = []
    summary_events = {id(r): Event(author="model", content=r.compacted_content) for r in ranges}
    for event, content in pairs:
        covering = next(
            (r for r in ranges if r.start_timestamp <= event.timestamp <= r.end_timestamp),
            None,
        )
        if covering is None:
            out.append((event, content))
            continue
        if id(covering) not in placed:
            placed.add(id(covering))
            summary = summary_events[id(covering)]
            assert summary.content is not None
            out.append((summary, summary.content))
    # Summaries of ranges after the last kept event (nothing of theirs was in pairs).
    for r in ranges:
        if id(r) not in placed:
            summary = summary_events[id(r)]
            assert summary.content is not None
            out.append((summary, summary.content))
    return _drop_orphan_responses(out)


def _drop_orphan_responses(
    pairs: list[tuple[Event, types.Content]],
) -> list[tuple[Event, types.Content]]:
    calls = {c.id for event, _ in pairs for c in event.get_function_calls() if c.id}
    out: list[tuple[Event, types.Content]] = []
    for event, content in pairs:
        responses = event.get_function_responses()
        if responses and any(r.id not in calls for r in responses):
            parts = [
                p
                for p in content.parts or []
                if p.function_response is None or p.function_response.id in calls
            ]
            if not parts:
                continue
            content = content.model_copy(update={"parts": parts})
            event = event.replace(content=content)
        out.append((event, content))
    return out
