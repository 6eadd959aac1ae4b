"""Session state as seen by callbacks and tools: committed value plus a pending delta.

Keys are scoped by prefix:

* ``app:`` keys are shared by every session of the app;
* ``user:`` keys by every session of the same user of the app;
* ``temp:`` keys live for one invocation and are never persisted;
* other keys belong to the session.

A :class:`State` never writes through to the session. Writes go to its delta, reads see the
delta first; the delta leaves with the next event the context produces, and the Runner
applies it to the session when it persists that event.

Every store keeps state as JSON, so a write is checked when it is made, the same way for
every store: a key must be a string, and a value (except under ``temp:``, never stored) must
be something JSON can hold. A ``user:`` or ``app:`` key is also a row's key in a SQL store,
so it holds no NUL character (PostgreSQL refuses NUL in text) and at most
:data:`MAX_SHARED_KEY_LENGTH` characters. A bad write raises
:class:`~adk_rx.errors.StateValueError` naming the key and, when known, the tool or callback
that wrote it; the session services check the ``user:`` and ``app:`` keys of what they are
given again (:func:`check_shared_key`), before they write anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

from adk_rx.errors import ConfigurationError, StateValueError

__all__ = [
    "MAX_SHARED_KEY_LENGTH",
    "REMOVED",
    "State",
    "apply_delta",
    "check_shared_key",
    "check_state_delta",
    "merge_state_deltas",
    "persistent_delta",
]

REMOVED = "__ADK_SENTINEL_REMOVED__"
"""The value a delta holds for a key it deletes (serialises as plain JSON)."""

MAX_SHARED_KEY_LENGTH = 512
"""The longest ``user:`` or ``app:`` key, in characters (a SQL store's key column)."""

_SHARED_PREFIXES = ("user:", "app:")


def _is_removed(value: Any) -> bool:
    return value.__class__ is str and value == REMOVED


_SCALARS = (str, int, float, bool)


def _check_write(key: Any, value: Any, writer: str | None) -> None:
    """Raises StateValueError unless every store can keep ``value`` under ``key``."""
    if not isinstance(key, str):
        raise StateValueError(
            key, f"has type {type(key).__name__}; state keys must be strings", writer
        )
    if key.startswith(_SHARED_PREFIXES):
        check_shared_key(key, writer)
    if value is None or value.__class__ in _SCALARS or key.startswith(State.TEMP_PREFIX):
        return
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise StateValueError(
            key,
            f"holds a {type(value).__name__} that no session store can keep ({exc}); store "
            "JSON values (dict, list, str, int, float, bool, None), e.g. a datetime as its "
            "isoformat(), or use a temp: key for this invocation only",
            writer,
        ) from exc


def check_shared_key(key: str, writer: str | None = None) -> None:
    """Checks a ``user:`` or ``app:`` key: every store can keep it as a row's key.

    Raises:
        StateValueError: the key holds a NUL character, or is longer than
            :data:`MAX_SHARED_KEY_LENGTH` characters.
    """
    if "\x00" in key:
        raise StateValueError(
            key, "holds a NUL character, which a user: or app: key cannot hold", writer
        )
    if len(key) > MAX_SHARED_KEY_LENGTH:
        raise StateValueError(
            key,
            f"is {len(key)} characters long; a user: or app: key has at most "
            f"{MAX_SHARED_KEY_LENGTH}",
            writer,
        )


def check_state_delta(delta: Mapping[Any, Any], writer: str | None = None) -> None:
    """Checks every write of a state delta the way :class:`State` checks one.

    Raises:
        StateValueError: a key is not a string, or a value is not JSON, or a ``user:`` /
            ``app:`` key fails :func:`check_shared_key`.
    """
    for key, value in delta.items():
        _check_write(key, value, writer)


class State(MutableMapping[str, Any]):
    """A mutable view of session state that records every write in a delta.

    Args:
        value: the committed state (not modified).
        delta: where writes are recorded; shared with the event that will carry them.
        writer: who writes through this view (e.g. ``"tool 'save'"``), named by errors.

    Raises:
        StateValueError: (on a write) a key that is not a string, a value JSON cannot hold
            outside ``temp:``, or a ``user:`` / ``app:`` key no store can keep.
    """

    APP_PREFIX: ClassVar[str] = "app:"
    USER_PREFIX: ClassVar[str] = "user:"
    TEMP_PREFIX: ClassVar[str] = "temp:"
    REMOVED: ClassVar[str] = REMOVED

    __slots__ = ("_delta", "_value", "writer")

    def __init__(
        self,
        value: Mapping[str, Any],
        delta: dict[str, Any] | None = None,
        *,
        writer: str | None = None,
    ) -> None:
        self._value = value
        self._delta: dict[str, Any] = {} if delta is None else delta
        self.writer = writer

    def __getitem__(self, key: str) -> Any:
        if key in self._delta:
            value = self._delta[key]
            if _is_removed(value):
                raise KeyError(key)
            return value
        return self._value[key]

    def __setitem__(self, key: str, value: Any) -> None:
        _check_write(key, value, self.writer)
        self._delta[key] = REMOVED if value is None else value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._delta[key] = REMOVED

    def __contains__(self, key: object) -> bool:
        if key in self._delta:
            return not _is_removed(self._delta[key])  # type: ignore[index]
        return key in self._value

    def __iter__(self) -> Iterator[str]:
        seen = set()
        for key in self._value:
            if key in self:
                seen.add(key)
                yield key
        for key, value in self._delta.items():
            if key not in seen and not _is_removed(value):
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def has_delta(self) -> bool:
        """True when something was written through this view."""
        return bool(self._delta)

    @property
    def delta(self) -> dict[str, Any]:
        """The writes recorded so far (``REMOVED`` marks deletions)."""
        return self._delta

    def to_dict(self) -> dict[str, Any]:
        """The state as a plain dict, delta applied."""
        return {key: self[key] for key in self}

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"


def apply_delta(target: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Applies a state delta to a plain dict in place (``REMOVED`` deletes)."""
    for key, value in delta.items():
        if _is_removed(value):
            target.pop(key, None)
        else:
            target[key] = value


def persistent_delta(delta: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a delta that is stored: everything but ``temp:`` keys."""
    return {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}


def merge_state_deltas(
    left: Mapping[str, Any], right: Mapping[str, Any], path: str = ""
) -> dict[str, Any]:
    """``left`` with ``right`` laid on top, nested mappings merged key by key.

    Raises:
        ConfigurationError: two nested values have keys of different types.
    """
    merged = dict(left)
    for key, value in right.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            old_keys = {type(k) for k in old}
            new_keys = {type(k) for k in value}
            if old_keys and new_keys and old_keys != new_keys:
                raise ConfigurationError(
                    f"cannot merge state delta at {path}{key!s}: nested key types differ "
                    f"({sorted(t.__name__ for t in old_keys)} vs "
                    f"{sorted(t.__name__ for t in new_keys)})"
                )
            merged[key] = merge_state_deltas(old, value, f"{path}{key!s}.")
        else:
            merged[key] = value
    return merged
