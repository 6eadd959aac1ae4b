"""Which user owns a session or an event: what the trace routes need, since their paths name
only the app and the session (or event), as in google-adk.

Fed by the store tap with every event the server stores, like google-adk's in-memory span
exporter sees only the runs of its own process. Bounded: the oldest entries are dropped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from adk_rx.events import Event
from adk_rx.sessions.session import Session

__all__ = ["TraceIndex"]

_Owner = tuple[str, str]  # (user id, session id)


class TraceIndex:
    """(app, session id) -> users, and (app, event id) -> (user, session id).

    Args:
        max_sessions: sessions remembered.
        max_events: events remembered.
    """

    def __init__(self, max_sessions: int = 10_000, max_events: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._sessions: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
        self._events: OrderedDict[tuple[str, str], _Owner] = OrderedDict()
        self._max_sessions = max_sessions
        self._max_events = max_events

    def on_stored(self, session: Session, event: Event) -> None:
        """The store tap: remembers the session's user and the event's owner."""
        key = (session.app_name, session.id)
        with self._lock:
            users = self._sessions.setdefault(key, [])
            if session.user_id in users:
                users.remove(session.user_id)
            users.append(session.user_id)  # the most recent last
            self._sessions.move_to_end(key)
            if len(self._sessions) > self._max_sessions:
                self._sessions.popitem(last=False)
            if event.author != "user":
                self._events[(session.app_name, event.id)] = (session.user_id, session.id)
                if len(self._events) > self._max_events:
                    self._events.popitem(last=False)

    def session_user(self, app_name: str, session_id: str, caller: str | None) -> str | None:
        """The session's user (the caller's, when tokens name one), or None."""
        with self._lock:
            users = list(self._sessions.get((app_name, session_id), ()))
        if caller is not None:
            return caller if caller in users else None
        return users[-1] if users else None

    def event_owner(self, app_name: str, event_id: str, caller: str | None) -> _Owner | None:
        """(user, session id) of a stored event, or None (also for another user's)."""
        with self._lock:
            owner = self._events.get((app_name, event_id))
        if owner is None or (caller is not None and owner[0] != caller):
            return None
        return owner
