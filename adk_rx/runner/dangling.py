"""Calls left without an answer by a crash, and the answers that close them.

A process that dies while a tool runs (``kill -9``, a power cut, an OOM kill) leaves the
model's function call stored and its response never written. Model providers refuse such a
history: OpenAI and every OpenAI-compatible server reject an assistant ``tool_calls`` message
that no ``tool`` message answers, so each later turn of the session would fail.

Before an invocation stores its user message (and so before any model request of that
invocation), the Runner looks for such calls in the stored history and stores one function
response ``{"error": "interrupted"}`` per call, authored, branched and numbered as the tool's
own response would have been. These answers are applied, then persisted, and not emitted:
they belong to the invocation that was interrupted, not to the one that finds them.

Not every unanswered call is dangling:

* a call listed in its event's ``long_running_tool_ids`` waits for a later answer on
  purpose (a ``LongRunningFunctionTool``; a confirmation request, ``adk_request_confirmation``);
* a call the new user message answers (a client sending the function response itself);
* a call of the user's own message (``author == "user"``): no tool of ours runs it.

:func:`dangling_calls` finds them among the session's open calls
(:func:`adk_rx.flows.open_calls.open_calls`, one memoised pass over the history);
:func:`interrupted_answers` builds the answer events.
A resumed invocation may decide differently for some calls (run an idempotent tool again
rather than answer it): split the list of :func:`dangling_calls` before building answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.genai import types

from adk_rx.events import Event
from adk_rx.flows.open_calls import open_calls
from adk_rx.sessions.session import Session

__all__ = ["INTERRUPTED", "DanglingCall", "dangling_calls", "interrupted_answers"]

INTERRUPTED = "interrupted"
"""The error text of the response stored for a call a crash left unanswered."""


@dataclass(frozen=True, slots=True)
class DanglingCall:
    """A stored function call that never got a stored response.

    Attributes:
        call: the function call as stored.
        event: the stored event that carries it (its author, branch and invocation id).
    """

    call: types.FunctionCall
    event: Event


def dangling_calls(
    session: Session, answered_by: types.Content | None = None
) -> list[DanglingCall]:
    """The stored calls of agents that have no stored response, oldest first.

    Long-running calls (still legitimately pending) are not included.

    Args:
        session: the session as read from the store.
        answered_by: the new user message; calls it answers are not dangling.

    Returns:
        The dangling calls, in the order they were stored.
    """
    found = open_calls(session)
    if not found:
        return []
    answered = {
        part.function_response.id
        for part in (answered_by.parts or [] if answered_by is not None else [])
        if part.function_response is not None and part.function_response.id
    }
    return [
        DanglingCall(open_call.call, open_call.event)
        for call_id, open_call in found.items()
        if call_id not in answered
        and open_call.event.author != "user"
        and not open_call.is_long_running
    ]


def interrupted_answers(calls: Iterable[DanglingCall]) -> list[Event]:
    """The events that answer ``calls`` with ``{"error": "interrupted"}``.

    One event per stored call event, carrying that event's author, branch and invocation
    id, as the tool's own response would have; its parts answer the calls in order.

    Args:
        calls: the calls to answer (usually the result of :func:`dangling_calls`).

    Returns:
        The answer events, in the order of the calls they answer.
    """
    grouped: dict[str, tuple[Event, list[types.Part]]] = {}
    for dangling in calls:
        event, call = dangling.event, dangling.call
        _, parts = grouped.setdefault(event.id, (event, []))
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response={"error": INTERRUPTED}
                )
            )
        )
    return [_answer(event, parts) for event, parts in grouped.values()]


def _answer(call_event: Event, parts: Sequence[types.Part]) -> Event:
    return Event(
        author=call_event.author,
        branch=call_event.branch,
        invocation_id=call_event.invocation_id,
        content=types.Content(role="user", parts=list(parts)),
    )
