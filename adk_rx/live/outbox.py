"""The live flow's outbox: one event at a time to the subscriber, from many threads.

A live session has several producers (the queue's drain thread forwarding the user's turns,
the model connection's thread, tools finishing on the I/O pool), but the Runner's observer
takes one notification at a time. The outbox is a queue-drain: a producer that finds delivery
busy leaves its event queued and returns; the thread that is delivering delivers it next.

An interruption purges the content chunks of the interrupted agent still waiting in the
queue, so a barged-in answer stops at once instead of draining stale chunks. Signals are
never purged: an earlier ``interrupted`` or ``turn_complete`` still waiting is delivered, so
a subscriber sees every turn end.

Marble diagram (``p`` partial chunks of agent A waiting while delivery is busy, ``!`` a turn
complete, ``i`` the interruption)::

    pushed:     -p1-p2-!-p3-i--e-|
    delivered:  -p1----!----i-e-|     (p2, p3 purged)
"""

from __future__ import annotations

import threading
from collections import deque

from reactivex import abc

from adk_rx.events import Event

__all__ = ["Outbox"]


class Outbox:
    """Serialises events (and the terminal notification) to ``observer``."""

    def __init__(self, observer: abc.ObserverBase[Event]) -> None:
        self._observer = observer
        self._lock = threading.Lock()
        self._queue: deque[Event | BaseException | None] = deque()  # None: completed
        self._busy = False
        self._done = False

    def push(self, event: Event) -> None:
        """Delivers ``event`` after everything pushed before it."""
        self._offer(event)

    def fail(self, error: Exception) -> None:
        """Errors the stream after what was pushed before (once; later calls are ignored)."""
        self._offer(error)

    def complete(self) -> None:
        """Completes the stream after what was pushed before."""
        self._offer(None)

    def purge_partials(self, author: str) -> int:
        """Drops the waiting content chunks of ``author`` (partial events that carry no
        ``interrupted``, ``turn_complete`` or error); returns how many."""
        with self._lock:
            kept = deque(item for item in self._queue if not _is_chunk_of(item, author))
            dropped = len(self._queue) - len(kept)
            self._queue = kept
        return dropped

    def _offer(self, item: Event | BaseException | None) -> None:
        with self._lock:
            if self._done:
                return
            if not isinstance(item, Event):
                self._done = True
            self._queue.append(item)
            if self._busy:
                return
            self._busy = True
        self._drain()

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._busy = False
                    return
                item = self._queue.popleft()
            if isinstance(item, Event):
                self._observer.on_next(item)
            elif item is None:
                self._observer.on_completed()
            else:
                assert isinstance(item, Exception)
                self._observer.on_error(item)


def _is_chunk_of(item: Event | BaseException | None, author: str) -> bool:
    if not isinstance(item, Event) or not item.partial or item.author != author:
        return False
    return not (item.interrupted or item.turn_complete or item.error_code)
