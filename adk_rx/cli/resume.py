"""Resuming a stored session in ``adk-rx run --session-id``.

* :func:`open_session` finds the session, or creates it with ``--create``; an unknown id is
  an error that lists the user's sessions (exit status 2).
* :func:`pending_calls` finds what the session waits for: ``adk_request_confirmation`` and
  ``adk_request_credential`` calls and long-running tool calls that have no response yet, so
  the chat asks for them first (a credential request shows its sign-in link and takes the
  URL the browser came back to, or the key or token).
* :func:`history_lines` sums the session up: its event count and its last few turns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.genai import types

from adk_rx.auth.answers import credential_answer, sign_in_uri
from adk_rx.errors import ConfigurationError, SessionNotFoundError
from adk_rx.events import CREDENTIAL_FUNCTION, Event
from adk_rx.flows.contents import CONFIRMATION_FUNCTION
from adk_rx.runner import Runner
from adk_rx.sessions.session import Session

__all__ = ["answer_part", "describe_pending", "history_lines", "open_session", "pending_calls"]

_SHOWN_SESSIONS = 5
_TEXT_WIDTH = 100


def open_session(
    runner: Runner,
    user_id: str,
    session_id: str | None,
    *,
    create: bool,
    state: dict[str, Any] | None = None,
) -> tuple[str, Session | None]:
    """The id of the session to use, and the stored session when one is resumed.

    Without ``session_id`` a new session is created; with ``create`` a missing
    ``session_id`` is created under that id. A session created here starts with ``state``.

    Raises:
        SessionNotFoundError: ``session_id`` names no session and ``create`` is off.
        ConfigurationError: ``create`` without a ``session_id``.
    """
    service, app = runner.session_service, runner.app_name
    if session_id is None:
        if create:
            raise ConfigurationError("--create needs --session-id (the id to create)")
        return service.create_session(app_name=app, user_id=user_id, state=state).run().id, None
    found = service.get_session(app_name=app, user_id=user_id, session_id=session_id).run()
    if found is not None:
        return session_id, found
    if not create:
        listed = service.list_sessions(app_name=app, user_id=user_id).run().sessions
        newest = sorted(listed, key=lambda s: s.last_update_time, reverse=True)
        known = ", ".join(s.id for s in newest[:_SHOWN_SESSIONS]) or "none"
        raise SessionNotFoundError(
            f"no session {session_id!r} of user {user_id!r} in app {app!r} (its sessions, "
            f"newest first: {known}); add --create to start a session with this id"
        )
    service.create_session(app_name=app, user_id=user_id, session_id=session_id, state=state).run()
    return session_id, None


def pending_calls(events: Sequence[Event]) -> list[types.FunctionCall]:
    """Confirmation requests and long-running calls of ``events`` that have no response."""
    answered = {r.id for event in events for r in event.get_function_responses()}
    pending: list[types.FunctionCall] = []
    for event in events:
        if event.author == "user":
            continue
        waiting = event.long_running_tool_ids or frozenset()
        for call in event.get_function_calls():
            if not call.id or call.id in answered:
                continue
            if call.name == CONFIRMATION_FUNCTION or call.id in waiting:
                pending.append(call)
    return pending


def describe_pending(call: types.FunctionCall) -> str:
    """The question for a pending call (its last line is the prompt)."""
    if call.name == CONFIRMATION_FUNCTION:
        args = call.args or {}
        original = args.get("originalFunctionCall") or {}
        hint = (args.get("toolConfirmation") or {}).get("hint") or ""
        name = original.get("name", "the call")
        args_text = _short(json.dumps(original.get("args") or {}))
        asked = f"{name} asks for a confirmation: {hint or args_text}\n"
        return f"{asked}approve {name}?"
    if call.name == CREDENTIAL_FUNCTION:
        return _describe_credential(call)
    return f"{call.name}({_short(json.dumps(call.args or {}))}) waits for its result"


def answer_part(call: types.FunctionCall, reply: str) -> types.Part | None:
    """The FunctionResponse that answers ``call`` with what the user typed; None to skip.

    A confirmation takes y/yes (anything else rejects); a long-running call takes a JSON
    object, or any other text as ``{"result": text}``; an empty reply leaves it pending.
    """
    reply = reply.strip()
    response: dict[str, object]
    if call.name == CREDENTIAL_FUNCTION:
        answer = credential_answer(call.args or {}, reply)
        if answer is None:
            return None
        response = answer
    elif call.name == CONFIRMATION_FUNCTION:
        response = {"confirmed": reply.lower() in ("y", "yes")}
    elif not reply:
        return None
    else:
        try:
            value = json.loads(reply)
        except json.JSONDecodeError:
            value = reply
        response = value if isinstance(value, dict) else {"result": value}
    return types.Part(
        function_response=types.FunctionResponse(id=call.id, name=call.name, response=response)
    )


def _describe_credential(call: types.FunctionCall) -> str:
    args = call.args or {}
    config = args.get("authConfig") or {}
    kind = (config.get("authScheme") or {}).get("type", "")
    uri = sign_in_uri(args)
    if uri is not None:
        return (
            f"a tool asks you to sign in: open\n  {uri}\n"
            "then paste the URL your browser was sent back to"
        )
    if kind == "apiKey":
        return "a tool asks for an API key; paste it"
    return "a tool asks for a credential; paste the token (or user:password)"


def history_lines(session: Session, turns: int = 3) -> list[str]:
    """``N events`` and the last ``turns`` turns: the user's text and the final replies."""
    events = session.events
    lines = [f"resumed session {session.id}: {len(events)} events"]
    starts = [i for i, e in enumerate(events) if e.author == "user" and e.text()]
    if not starts:
        return lines
    lines.append(f"last {min(turns, len(starts))} turn(s):")
    for index in starts[-turns:]:
        lines.append(f"  you: {_short(events[index].text())}")
        for event in events[index + 1 :]:
            if event.author == "user" and event.text():
                break
            if event.error_code:
                lines.append(f"  {event.author}: [{event.error_code}] {event.error_message or ''}")
            elif event.author != "user" and event.text() and not event.get_function_calls():
                lines.append(f"  {event.author}: {_short(event.text())}")
    return lines


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 1] + "…"
