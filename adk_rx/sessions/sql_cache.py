"""Decoded session histories kept between reads, so a turn reads only the events it lacks.

A stored history only grows: each event gets the next sequence number and is never changed.
So the events ``0..k-1`` a process decoded once stay right for as long as the session lives,
and a later read asks the database only for ``seq >= k-1``. The row at ``k-1`` must still
carry the cached event's id; if it does not (the session was deleted and created again,
perhaps by another process) the cache entry is dropped and the history read in full.

Entries are evicted least recently used first, by the total number of events they hold.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from adk_rx.errors import StoreError
from adk_rx.events import Event

__all__ = ["HistoryCache", "decode_event"]

_Key = tuple[str, str, str]


class _History:
    __slots__ = ("events", "memo")

    def __init__(self) -> None:
        self.events: list[Event] = []  # the events with seq 0..len-1
        # Shared by the views of this history, as InMemorySessionService shares its memo.
        self.memo: dict[Any, Any] = {}


class HistoryCache:
    """Per-session decoded event prefixes, bounded by ``capacity`` events in total.

    Args:
        capacity: events kept across all sessions (0 turns the cache off).
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._size = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[_Key, _History] = OrderedDict()

    def snapshot(self, key: _Key) -> tuple[list[Event], int]:
        """The cached event list of a session and its current length.

        The list only ever grows, so its first ``length`` items stay valid after the lock
        is released.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return [], 0
            return entry.events, len(entry.events)

    def extend(
        self,
        key: _Key,
        prefix: list[Event],
        start: int,
        rows: Sequence[tuple[int, str, str]],
    ) -> tuple[list[Event], dict[Any, Any] | None]:
        """The whole history: ``prefix[:start]`` plus ``rows`` (seq, id, body) from the database.

        Returns the events (a fresh list the caller owns) and the memo the views of this
        history share (None when the cache holds a different one).
        """
        decoded = [decode_event(key, seq, body) for seq, _, body in rows]
        events = prefix[:start] + decoded
        if self._capacity <= 0:
            return events, None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.events is prefix:
                if len(prefix) == start:
                    prefix.extend(decoded)
                    self._size += len(decoded)
            else:
                entry = self._replace(key)
                entry.events = list(events)
                self._size += len(events)
            memo = entry.memo if len(entry.events) == len(events) else None
            self._entries.move_to_end(key)
            self._evict()
            return events, memo

    def cached(self, key: _Key, seq: int, event_id: str) -> Event | None:
        """The cached event with that seq, if its id matches."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or seq >= len(entry.events):
                return None
            event = entry.events[seq]
            return event if event.id == event_id else None

    def appended(self, key: _Key, seq: int, event: Event) -> None:
        """Records an event this process stored, when it continues the cached prefix."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and len(entry.events) == seq:
                entry.events.append(event)
                self._size += 1
                self._evict()

    def forget(self, key: _Key) -> None:
        """Drops a session's entry (deleted, or no longer matching the database)."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._size -= len(entry.events)

    def _replace(self, key: _Key) -> _History:
        old = self._entries.pop(key, None)
        if old is not None:
            self._size -= len(old.events)
        entry = self._entries[key] = _History()
        return entry

    def _evict(self) -> None:
        while self._size > self._capacity and self._entries:
            _, entry = self._entries.popitem(last=False)
            self._size -= len(entry.events)


def decode_event(key: _Key, seq: int, body: str) -> Event:
    """Parses a stored event body.

    Raises:
        StoreError: the body is not a valid event (the row was damaged outside adk_rx).
    """
    try:
        return Event.from_json(body)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise StoreError(
            f"stored event {seq} of session {key[2]!r} (app {key[0]!r}, user {key[1]!r}) "
            f"is unreadable: {exc}"
        ) from exc
