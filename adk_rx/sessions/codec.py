"""JSON encoding of what the SQL stores keep (state values, state dicts, events), and a cache
of decoded events.

Encoding happens before a transaction starts, so a value that cannot be stored fails the
call without touching the database.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticSerializationError

from adk_rx.errors import ConfigurationError
from adk_rx.events import Event

__all__ = [
    "EventCache",
    "decode_state",
    "decode_value",
    "encode_event",
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
        return event.to_json()
    except PydanticSerializationError as exc:
        raise ConfigurationError(f"event {event.id} cannot be stored as JSON: {exc}") from exc


class EventCache:
    """Decoded events by (session key, seq), so a re-read does not parse JSON again.

    Events are immutable, so sharing them between views is safe. An entry is used only when
    the stored event id matches, which keeps it right after a session is deleted and
    re-created under the same id (possibly by another process).
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._events: OrderedDict[tuple[str, str, str, int], Event] = OrderedDict()

    def get(self, key: tuple[str, str, str, int], event_id: str) -> Event | None:
        event = self._events.get(key)
        return event if event is not None and event.id == event_id else None

    def put(self, key: tuple[str, str, str, int], event: Event) -> None:
        if self._capacity <= 0:
            return
        with self._lock:
            self._events[key] = event
            if len(self._events) > self._capacity:
                self._events.popitem(last=False)
