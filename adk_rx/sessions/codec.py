"""JSON encoding of what the SQL stores keep: state values, state dicts and events.

Encoding happens before a transaction starts, so a value that cannot be stored fails the
call without touching the database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import PydanticSerializationError

from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.sessions.base import ScopedDelta, storable
from adk_rx.state import REMOVED

__all__ = [
    "SharedDelta",
    "decode_state",
    "decode_value",
    "encode_event",
    "encode_shared",
    "encode_state",
    "encode_value",
]


def encode_value(key: str, value: Any) -> str:
    """The JSON text of one state value.

    Raises:
        ConfigurationError: the value is not JSON-serializable.
    """
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"state key {key!r} holds a value a SQL store cannot keep: {exc}"
        ) from exc


def encode_state(state: Mapping[str, Any]) -> str:
    """The JSON text of a state dict (see :func:`encode_value`)."""
    try:
        return json.dumps(state, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"session state a SQL store cannot keep: {exc}") from exc


def decode_state(text: str) -> dict[str, Any]:
    """The dict of a stored JSON state."""
    state = json.loads(text)
    return state if isinstance(state, dict) else {}


def decode_value(text: str) -> Any:
    """The value of a stored JSON state value."""
    return json.loads(text)


def encode_event(event: Event) -> str:
    """The JSON body of a stored event.

    Raises:
        ConfigurationError: the event carries a value that is not JSON-serializable.
    """
    try:
        return storable(event).to_json()
    except PydanticSerializationError as exc:
        raise ConfigurationError(f"event {event.id} cannot be stored as JSON: {exc}") from exc


class SharedDelta:
    """The ``user:`` and ``app:`` parts of a delta, JSON-encoded and sorted; None deletes."""

    __slots__ = ("app", "user")

    def __init__(
        self, user: Sequence[tuple[str, str | None]], app: Sequence[tuple[str, str | None]]
    ) -> None:
        self.user = user
        self.app = app


def encode_shared(scoped: ScopedDelta) -> SharedDelta:
    """The ``user:`` / ``app:`` parts of a split delta, encoded (see :func:`encode_value`)."""

    def encode(delta: Mapping[str, Any]) -> list[tuple[str, str | None]]:
        return [
            (key, None if isinstance(value, str) and value == REMOVED else encode_value(key, value))
            for key, value in sorted(delta.items())
        ]

    return SharedDelta(encode(scoped.user), encode(scoped.app))
