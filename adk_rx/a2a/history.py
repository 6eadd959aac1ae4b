"""What a remote agent is sent: what its conversation said since it last answered.

The remote server keeps its own session per A2A context, so each turn sends only the
events after the remote agent's last answer (the stored event carrying ``a2a:context_id``),
in that context, as google-adk's ``RemoteA2aAgent`` does. The user's parts go as they are;
another agent's turn goes as text (``For context: [agent] said: ...``), so the remote model
does not take it for the user's own words or for its own calls; the transfer that led to the
remote agent is left out.
"""

from __future__ import annotations

import json

from google.genai import types

from adk_rx.a2a.keys import CONTEXT_ID
from adk_rx.context import InvocationContext
from adk_rx.events import Event

__all__ = ["outgoing"]

TRANSFER = "transfer_to_agent"


def _context_of(event: Event, agent: str) -> str | None:
    if event.author != agent or not event.custom_metadata:
        return None
    found = event.custom_metadata.get(CONTEXT_ID)
    return found if isinstance(found, str) else None


def _is_transfer(part: types.Part) -> bool:
    call = part.function_call or part.function_response
    return call is not None and call.name == TRANSFER


def _rendered(event: Event) -> list[types.Part]:
    """Another agent's turn (or a tool's result) as text for the remote agent."""
    assert event.content is not None
    parts: list[types.Part] = []
    for part in event.content.parts or []:
        if part.thought or _is_transfer(part):  # routing that led here, not conversation
            continue
        if part.text:
            parts.append(types.Part(text=f"For context: [{event.author}] said: {part.text}"))
        elif part.function_call:
            args = json.dumps(part.function_call.args or {}, default=str)
            text = (
                f"[{event.author}] called tool `{part.function_call.name}` with parameters: {args}"
            )
            parts.append(types.Part(text=f"For context: {text}"))
        elif part.function_response:
            result = json.dumps(part.function_response.response or {}, default=str)
            name = part.function_response.name
            parts.append(
                types.Part(text=f"For context: [{event.author}] `{name}` returned: {result}")
            )
    return parts


def _user_parts(event: Event) -> list[types.Part]:
    assert event.content is not None
    parts: list[types.Part] = []
    for part in event.content.parts or []:
        if part.function_response is not None:  # answers a local call; the remote made none
            result = json.dumps(part.function_response.response or {}, default=str)
            parts.append(types.Part(text=f"Tool {part.function_response.name} returned: {result}"))
        elif part.function_call is None:
            parts.append(part)
    return parts


def outgoing(ctx: InvocationContext, agent: str) -> tuple[list[types.Part], str | None]:
    """The parts to send ``agent``'s remote side now, and the remote context to send them in
    (None: a new conversation)."""
    events = ctx.session.events
    start, context_id = 0, None
    for index in range(len(events) - 1, -1, -1):
        found = _context_of(events[index], agent)
        if found is not None:
            start, context_id = index + 1, found
            break
    parts: list[types.Part] = []
    for event in events[start:]:
        if event.content is None or not event.content.parts or event.partial:
            continue
        if event.author == "user":
            parts.extend(_user_parts(event))
        elif event.author != agent:
            parts.extend(_rendered(event))
    return parts, context_id
