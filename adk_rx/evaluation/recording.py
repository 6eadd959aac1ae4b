"""Turns from events: what one invocation asked, did and answered, as google-adk groups it.

Events are grouped by ``invocation_id`` (google-adk's ``convert_events_to_eval_invocations``):
the user's event gives the turn's user content, the last final response with text (else the
last final response) its answer, and the other events what happened on the way. A recorded
turn keeps that as :class:`IntermediateData` (the eval set file's shape), an actual turn as
:class:`InvocationEvents` (what the judges read in order).

The runtime's own requests (``adk_request_confirmation``, ``adk_request_credential``) are not
tools the agent chose: their calls and responses are left out of both shapes, so a replay
whose requests carry new ids still matches the recording.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from google.genai import types

from adk_rx.evaluation.intermediate import (
    RUNTIME_REQUESTS,
    IntermediateData,
    InvocationEvent,
    InvocationEvents,
)
from adk_rx.events import Event

__all__ = ["RecordedTurn", "invocations_from_events"]


@dataclass(frozen=True)
class RecordedTurn:
    """One invocation's user content, answer and what happened in between."""

    invocation_id: str
    user_content: types.Content
    final_response: types.Content | None
    intermediate_data: IntermediateData | InvocationEvents
    creation_timestamp: float
    authors: tuple[str, ...]


def invocations_from_events(events: Iterable[Event], *, recorded: bool) -> list[RecordedTurn]:
    """One turn per invocation id, in the order the invocations started.

    Args:
        events: a session's events, or a run's (partial events are skipped).
        recorded: True for :class:`IntermediateData` (an eval set's expected turn), False for
            :class:`InvocationEvents` (an actual turn).
    """
    grouped: dict[str, list[Event]] = {}
    for event in events:
        if not event.partial:
            grouped.setdefault(event.invocation_id, []).append(event)
    return [_turn(invocation_id, group, recorded) for invocation_id, group in grouped.items()]


def _turn(invocation_id: str, events: list[Event], recorded: bool) -> RecordedTurn:
    user_content = types.Content(role="user", parts=[])
    timestamp = 0.0
    final: Event | None = None
    said: list[Event] = []
    for event in events:
        if event.author == "user":
            if event.content is not None:
                user_content, timestamp = event.content, event.timestamp
            continue
        if not event.content or not event.content.parts:
            continue
        if event.is_final_response() and (not _has_text(final) or _has_text(event)):
            final = event
        if _worth_keeping(event):
            said.append(event)
    final_content = final.content if final is not None else None
    data = _recorded(said, final) if recorded else _actual(said, final)
    return RecordedTurn(
        invocation_id=invocation_id,
        user_content=user_content,
        final_response=final_content,
        intermediate_data=data,
        creation_timestamp=timestamp,
        authors=tuple(dict.fromkeys(e.author for e in said)),
    )


def _has_text(event: Event | None) -> bool:
    parts = event.content.parts if event is not None and event.content else None
    return any(p.text for p in parts or [])


def _worth_keeping(event: Event) -> bool:
    parts = event.content.parts if event.content else None
    return any(
        p.function_call or p.function_response or p.text or p.inline_data for p in parts or []
    )


def _without_requests(content: types.Content | None) -> types.Content | None:
    """The content without the runtime's request calls and responses (None when none is left)."""
    if content is None or not content.parts:
        return None
    kept = [
        p
        for p in content.parts
        if not (p.function_call and p.function_call.name in RUNTIME_REQUESTS)
        and not (p.function_response and p.function_response.name in RUNTIME_REQUESTS)
    ]
    if len(kept) == len(content.parts):
        return content
    return content.model_copy(update={"parts": kept}) if kept else None


def _actual(said: list[Event], final: Event | None) -> InvocationEvents:
    kept: list[InvocationEvent] = []
    for event in said:
        content = _without_requests(event.content)
        if content is None:
            continue
        if event is final and not event.get_function_calls():
            content = None  # the answer is the turn's final_response; not counted twice
        kept.append(InvocationEvent(author=event.author, content=content))
    return InvocationEvents(invocation_events=kept)


def _recorded(said: list[Event], final: Event | None) -> IntermediateData:
    uses: list[types.FunctionCall] = []
    responses: list[types.FunctionResponse] = []
    texts: list[tuple[str, list[types.Part]]] = []
    for event in said:
        uses += [c for c in event.get_function_calls() if c.name not in RUNTIME_REQUESTS]
        responses += [r for r in event.get_function_responses() if r.name not in RUNTIME_REQUESTS]
        text = event.text()
        if text and event is not final and event.is_final_response():
            texts.append((event.author, [types.Part(text=text)]))
    return IntermediateData(tool_uses=uses, tool_responses=responses, intermediate_responses=texts)
