"""Model requests read a compacted session: summaries stand in for the ranges they cover.

A compaction event covers the events whose timestamps lie in ``[start_timestamp,
end_timestamp]``. A compaction whose range lies inside a later one's is superseded (the later
summary rolled it in). The events covered by the remaining compactions are left out; each
summary takes the place of the first event it covers. A function response whose call was
summarised away is left out too, so the request never answers a call it does not show.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

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
    """``pairs`` (event, content sent for it) with compacted ranges replaced by summaries.

    ``pairs`` are in stored order, so each range covers one slice of them, found by
    bisection on the timestamps: the cost grows with the events kept, not the history.
    """
    ranges = _effective(compactions)
    stamps = [event.timestamp for event, _ in pairs]
    out: list[tuple[Event, types.Content]] = []
    position = 0
    for compaction in ranges:
        first = max(bisect_left(stamps, compaction.start_timestamp), position)
        last = bisect_right(stamps, compaction.end_timestamp)
        out.extend(pairs[position:first])
        summary = Event(author="model", content=compaction.compacted_content)
        out.append((summary, compaction.compacted_content))
        position = max(position, last)
    out.extend(pairs[position:])
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
