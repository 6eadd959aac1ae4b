"""Session values: a session view, read filters and list results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adk_rx.events import Event
from adk_rx.state import apply_delta

__all__ = ["GetSessionConfig", "ListSessionsResponse", "Session"]


class Session:
    """One conversation: its identity, its state and its events.

    A session object is a *view*: a store hands out a fresh one on every read, and the Runner
    applies each event of an invocation to its own view before persisting it. ``state``
    includes the ``app:`` and ``user:`` keys shared with other sessions, and (inside an
    invocation) its ``temp:`` keys.

    Attributes:
        id, app_name, user_id: the session's identity.
        state: the current state as a plain dict.
        events: the events, oldest first.
        last_update_time: timestamp (seconds) of the last event or of creation.
    """

    __slots__ = (
        "_memo",
        "_unpersisted",
        "app_name",
        "events",
        "id",
        "last_update_time",
        "state",
        "user_id",
    )

    def __init__(
        self,
        *,
        id: str,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        events: list[Event] | None = None,
        last_update_time: float = 0.0,
        memo: dict[Any, Any] | None = None,
    ) -> None:
        self.id = id
        self.app_name = app_name
        self.user_id = user_id
        self.state: dict[str, Any] = {} if state is None else state
        self.events: list[Event] = [] if events is None else events
        self.last_update_time = last_update_time
        # Derived data (e.g. model contents built from the history) shared by the views of
        # one stored session, so a long history is not converted again on every turn.
        self._memo: dict[Any, Any] = {} if memo is None else memo
        # Ids of events the Runner applied to this view that the store has not stored yet (a
        # dict of str keys, which the GC does not track, where a set is always tracked).
        self._unpersisted: dict[str, None] = {}

    def apply(self, event: Event) -> None:
        """Appends ``event`` to this view and applies its state delta (partials are ignored)."""
        if event.partial:
            return
        self.events.append(event)
        if event.actions.state_delta:
            apply_delta(self.state, event.actions.state_delta)
        self.last_update_time = event.timestamp

    def mark_applied(self, event: Event) -> None:
        """Applies ``event`` ahead of the store (the Runner's step 1 of apply->persist->emit)."""
        if event.partial:
            return
        self.events.append(event)  # as apply() does, inline: once per event of a run
        if event.actions.state_delta:
            apply_delta(self.state, event.actions.state_delta)
        self.last_update_time = event.timestamp
        self._unpersisted[event.id] = None

    def take_applied(self, event: Event) -> bool:
        """True (and forgets it) when ``event`` was already applied by :meth:`mark_applied`."""
        try:
            del self._unpersisted[event.id]
        except KeyError:
            return False
        return True

    def __repr__(self) -> str:
        return (
            f"Session(id={self.id!r}, app_name={self.app_name!r}, user_id={self.user_id!r}, "
            f"events={len(self.events)}, state_keys={sorted(self.state)!r})"
        )


@dataclass(frozen=True, slots=True)
class GetSessionConfig:
    """Read filters for ``get_session``.

    Attributes:
        num_recent_events: keep only the newest N events.
        after_timestamp: keep only events with ``timestamp >= after_timestamp`` (inclusive).
    """

    num_recent_events: int | None = None
    after_timestamp: float | None = None

    def apply(self, events: list[Event]) -> list[Event]:
        """The events that pass both filters (the count first, then the timestamp)."""
        if self.num_recent_events is not None:
            events = events[-self.num_recent_events :] if self.num_recent_events > 0 else []
        if self.after_timestamp is not None:
            after = self.after_timestamp
            events = [e for e in events if e.timestamp >= after]
        return events


@dataclass(frozen=True, slots=True)
class ListSessionsResponse:
    """The sessions of one user, without their events."""

    sessions: list[Session] = field(default_factory=list)


def merge_scoped_state(
    session_state: Mapping[str, Any],
    app_state: Mapping[str, Any] | None,
    user_state: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """One state dict: session keys plus the app's and the user's shared keys."""
    merged = dict(session_state)
    if app_state:
        merged.update(app_state)
    if user_state:
        merged.update(user_state)
    return merged
