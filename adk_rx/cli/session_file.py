"""``adk-rx run --save-session FILE`` / ``--resume FILE``: a session as one JSON file.

The file is google-adk's (``adk run --save_session`` writes it, ``--resume`` reads it): the
session's camelCase JSON, ``{"id", "appName", "userId", "state", "events", "lastUpdateTime"}``
with each event as ``Event.to_dict()`` writes it. A file written by either tool loads in the
other. Resuming creates a new session of the running app and user with the file's state, then
stores the file's events in order (google-adk does the same), so the conversation goes on
where the file left it. google-adk's internal event metadata (``__adk_internal_*`` keys) is
dropped on load.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic

from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session

__all__ = ["MAX_SESSION_FILE_BYTES", "load_session_file", "restore_session", "save_session_file"]

MAX_SESSION_FILE_BYTES = 64 * 1024 * 1024
_INTERNAL_PREFIX = "__adk_internal_"


def save_session_file(session: Session, path: str | Path) -> Path:
    """Writes ``session`` to ``path`` as google-adk's session JSON; returns the path."""
    body: dict[str, Any] = {
        "id": session.id,
        "appName": session.app_name,
        "userId": session.user_id,
        "state": session.state,
        "events": [event.to_dict() for event in session.events],
        "lastUpdateTime": session.last_update_time,
    }
    target = Path(path)
    try:
        target.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot write the session file {target}: {exc}") from exc
    return target


def load_session_file(path: str | Path) -> tuple[dict[str, Any], list[Event]]:
    """The state and the events of a session file (camelCase or snake_case keys).

    Raises:
        ConfigurationError: the file cannot be read, is too large, or is not a session.
    """
    source = Path(path)
    try:
        if source.stat().st_size > MAX_SESSION_FILE_BYTES:
            raise ConfigurationError(
                f"the session file {source} is larger than {MAX_SESSION_FILE_BYTES} bytes"
            )
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read the session file {source}: {exc}") from exc
    except ValueError as exc:
        raise ConfigurationError(f"the session file {source} is not JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"the session file {source} does not hold a session object")
    state = data.get("state", {})
    events = data.get("events", [])
    if not isinstance(state, Mapping) or not isinstance(events, list):
        raise ConfigurationError(
            f"the session file {source}: state must be an object and events a list"
        )
    loaded: list[Event] = []
    for number, raw in enumerate(events, start=1):
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"the session file {source}: event {number} is not an object")
        try:
            loaded.append(Event.from_dict(_public(raw)))
        except pydantic.ValidationError as exc:
            raise ConfigurationError(
                f"the session file {source}: event {number} is not an event: "
                f"{exc.errors()[0].get('msg', exc)}"
            ) from exc
    return dict(state), loaded


def restore_session(
    service: BaseSessionService, *, app_name: str, user_id: str, path: str | Path
) -> Session:
    """A new session of ``app_name`` / ``user_id`` holding the file's state and events."""
    state, events = load_session_file(path)
    session = service.create_session(app_name=app_name, user_id=user_id, state=state).run()
    for event in events:
        service.append_event(session, event).run()
    stored = service.get_session(app_name=app_name, user_id=user_id, session_id=session.id).run()
    return stored if stored is not None else session


def _public(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The event without google-adk's internal metadata keys."""
    event = dict(raw)
    for key in ("customMetadata", "custom_metadata"):
        metadata = event.get(key)
        if isinstance(metadata, Mapping):
            kept = {k: v for k, v in metadata.items() if not str(k).startswith(_INTERNAL_PREFIX)}
            if kept:
                event[key] = kept
            else:
                del event[key]
    return event
