"""Request and response bodies: ADK's JSON shapes (camelCase accepted on input)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.genai import types

from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.sessions.session import Session

from ..errors import RequestRejectedError
from ..limits import Limits
from .validation import (
    check_client_state,
    check_id,
    check_message,
    check_part_count,
    parse_model,
)

__all__ = ["RunBody", "parse_run_body", "session_json"]


def _field(data: Mapping[str, Any], name: str) -> Any:
    """``data[name]``, or its camelCase spelling."""
    if name in data:
        return data[name]
    head, *rest = name.split("_")
    return data.get(head + "".join(word.capitalize() for word in rest))


@dataclass(frozen=True, slots=True)
class RunBody:
    """The body of ``/run``, ``/run_sse`` and ``POST .../invocations``."""

    app_name: str
    user_id: str
    session_id: str
    new_message: types.Content
    streaming: bool
    state_delta: dict[str, Any] | None
    invocation_id: str | None = None
    function_call_event_id: str | None = None

    def run_config(self, timeout: float | None = None) -> RunConfig:
        """SSE streaming (partial events) when the client asked for it; the deadline."""
        mode = StreamingMode.SSE if self.streaming else StreamingMode.NONE
        return RunConfig(streaming_mode=mode, timeout=timeout)


def _ident(data: Mapping[str, Any], name: str, given: str | None) -> str:
    value = _field(data, name)
    if given is not None:
        if value is not None and value != given:
            raise RequestRejectedError(
                f"{name} {value!r} in the body does not match the path ({given!r})"
            )
        return given
    if not isinstance(value, str) or not value:
        raise RequestRejectedError(f"{name} is required (a non-empty string)")
    return check_id(value, name)


def parse_run_body(
    data: Any,
    limits: Limits,
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
) -> RunBody:
    """Validates a run body; ids given by the path win and must match the body's.

    Raises:
        RequestRejectedError: a field is missing, malformed or over a limit (the
            ``ForbiddenStateError`` subclass for ``app:`` keys in ``state_delta``).
    """
    if not isinstance(data, Mapping):
        raise RequestRejectedError("the body must be a JSON object")
    message = _field(data, "new_message")
    if message is None:
        raise RequestRejectedError("new_message is required (a Content: {role, parts: [{text}]})")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    if isinstance(parts, list):  # counted before pydantic builds a Part of each
        check_part_count(len(parts), limits)
    content = parse_model(types.Content, message, "new_message")
    if not content.parts:
        raise RequestRejectedError("new_message has no parts")
    check_message(content, limits)
    delta = _field(data, "state_delta")
    if delta is not None:
        if not isinstance(delta, Mapping):
            raise RequestRejectedError("state_delta must be an object")
        check_client_state(delta, "state_delta", limits)
    streaming = _field(data, "streaming")
    optional = {name: _optional_str(data, name) for name in _OPTIONAL_IDS}
    return RunBody(
        app_name=_ident(data, "app_name", app_name),
        user_id=_ident(data, "user_id", user_id),
        session_id=_ident(data, "session_id", session_id),
        new_message=content,
        streaming=bool(streaming),
        state_delta=dict(delta) if delta is not None else None,
        **optional,
    )


_OPTIONAL_IDS = ("invocation_id", "function_call_event_id")


def _optional_str(data: Mapping[str, Any], name: str) -> str | None:
    value = _field(data, name)
    if value is not None and not isinstance(value, str):
        raise RequestRejectedError(f"{name} must be a string")
    return check_id(value, name) if value else None


def session_json(session: Session, *, with_events: bool = True) -> dict[str, Any]:
    """ADK's session JSON (camelCase keys)."""
    body: dict[str, Any] = {
        "id": session.id,
        "appName": session.app_name,
        "userId": session.user_id,
        "state": session.state,
        "lastUpdateTime": session.last_update_time,
    }
    body["events"] = [event.to_dict() for event in session.events] if with_events else []
    return body
