"""One server-owned invocation: its bounded event log and the readers waiting on it.

The run appends from whatever thread produced the event; readers are SSE responses on the
server's event loop. Every reader holds only a cursor into the one shared log, so a reader
costs no memory per event and the run never waits for any of them::

    run thread:   add(e1) add(e2) ...            (never blocks; wakes the loop at most once
                                                   per loop turn, however many readers)
    loop:         reader A: read_after(0) -> [1, 2]  send ...
                  reader B: read_after(1) -> [2]      send ...

The log keeps the newest ``capacity`` entries. A reader whose cursor fell out of the window
(it was slower than the log is long, or it reattached late) is told with a ``gap`` so it
knows that it missed entries (the stored ones are in the session).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from adk_rx.events import Event

__all__ = ["Entry", "InvocationLog", "Read", "Status"]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


Status = Literal["starting", "running", "completed", "failed", "timeout", "cancelled"]
FINISHED: frozenset[str] = frozenset({"completed", "failed", "timeout", "cancelled"})


class Entry:
    """One logged event: its cursor (1, 2, ...) and its JSON, encoded once for every reader.

    A finished log that is kept for reattaching drops its Event objects (:meth:`slim`): an
    Event costs several times its JSON in memory, and readers mostly need only the JSON.
    ``event`` then decodes it again on demand.
    """

    __slots__ = ("_event", "json", "partial", "seq")

    def __init__(self, seq: int, event: Event | None, json: str, partial: bool = False) -> None:
        self.seq = seq
        self._event = event
        self.json = json
        self.partial = event.partial if event is not None else partial

    @property
    def event(self) -> Event:
        """The event (decoded from its JSON when the log dropped the object)."""
        event = self._event
        return event if event is not None else Event.from_json(self.json)

    def slim(self) -> Entry:
        """The same entry without the Event object."""
        return Entry(self.seq, None, self.json, bool(self.partial))


@dataclass(frozen=True, slots=True)
class Read:
    """What a reader gets: the entries after its cursor, a gap, and whether the run ended."""

    entries: list[Entry] = field(default_factory=list)
    gap: tuple[int, int] | None = None  # (first missed, last missed)
    finished: bool = False


class InvocationLog:
    """The bounded event log of one invocation and its end status.

    Args:
        key: (app, user, session) of the run.
        loop: the server's event loop, where readers wait.
        capacity: how many entries are kept.
        earlier: the entries of an invocation this log resumes (its cursors go on after
            them), as another server's log had them.

    Attributes:
        resumable: the app is resumable: a server that outlives this one may resume the
            run, so the broker publishes its events whether or not anyone reads them.
    """

    def __init__(
        self,
        key: tuple[str, str, str],
        loop: asyncio.AbstractEventLoop,
        capacity: int,
        earlier: Sequence[Entry] = (),
    ) -> None:
        self.key = key
        self.invocation_id: str | None = None
        self.status: Status = "starting"
        self.error: str | None = None
        self.failure_status = 500  # the HTTP status a failed run answers (errors.py)
        self.created_at = time.time()
        self.finished_at: float | None = None
        self._loop = loop
        self._lock = threading.Lock()
        self.resumable = False
        self._entries: deque[Entry] = deque(earlier, maxlen=capacity)
        self._next_seq = earlier[-1].seq + 1 if earlier else 1
        self._size = sum(len(entry.json) for entry in self._entries)
        self._stored_seqs: list[int] = [entry.seq for entry in earlier if not entry.partial]
        self._waiters: list[asyncio.Future[None]] = []
        self._wake_scheduled = False
        self._started: asyncio.Future[str | None] = loop.create_future()
        self.ended: asyncio.Future[None] = loop.create_future()  # resolved on the loop at the end
        # The loop's thread, when the log is made on it (as the registry does): call_soon
        # from there needs no wake-up write.
        self._loop_thread = threading.get_ident() if _running_loop() is loop else None

    # -- writers (any thread) -------------------------------------------------------------
    def add(self, event: Event) -> None:
        """Appends an event (ignored once the invocation has finished)."""
        payload = event.to_json()
        with self._lock:
            if self.status in FINISHED:
                return
            if len(self._entries) == self._entries.maxlen:
                self._size -= len(self._entries[0].json)
            self._entries.append(Entry(self._next_seq, event, payload))
            self._size += len(payload)
            if not event.partial:
                self._stored_seqs.append(self._next_seq)
            self._next_seq += 1
            schedule = not self._wake_scheduled
            self._wake_scheduled = True
        if schedule:
            self._call_soon(self._wake)

    def set_started(self, invocation_id: str) -> None:
        """Records the invocation id (known once the user message is stored)."""
        with self._lock:
            if self.invocation_id is not None:
                return
            self.invocation_id = invocation_id
            if self.status == "starting":
                self.status = "running"
        self._call_soon(self._resolve_started)

    def finish(self, status: Status, error: str | None = None, failure_status: int = 500) -> bool:
        """Ends the log; the first call wins. Returns whether this call ended it."""
        with self._lock:
            if self.status in FINISHED:
                return False
            self.status = status
            self.error = error
            self.failure_status = failure_status
            self.finished_at = time.time()
            self._wake_scheduled = True
        self._call_soon(self._end_on_loop)
        return True

    # -- readers (the loop) ---------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def size_bytes(self) -> int:
        """The event JSON the log holds (what keeping it costs)."""
        return self._size

    @property
    def stored_seqs(self) -> list[int]:
        """The cursors of the stored (not partial) events, in order."""
        with self._lock:
            return list(self._stored_seqs)

    @property
    def head(self) -> int:
        """The cursor of the newest entry (0 when there is none)."""
        return self._next_seq - 1

    def read_after(self, cursor: int, limit: int) -> Read:
        """Up to ``limit`` entries after ``cursor``, the gap before them, and the end flag."""
        with self._lock:
            finished = self.status in FINISHED
            if not self._entries:
                return Read(finished=finished)
            first = self._entries[0].seq
            gap = (cursor + 1, first - 1) if cursor + 1 < first else None
            start = min(max(cursor + 1 - first, 0), len(self._entries))
            entries = list(itertools.islice(self._entries, start, start + limit))
            # Finished only once the reader has everything (the end frame comes last).
            done = finished and start + len(entries) >= len(self._entries)
            return Read(entries, gap, done)

    def slim(self) -> None:
        """Drops the Event objects of a finished log (kept for reattaching): only JSON stays."""
        with self._lock:
            self._entries = deque((entry.slim() for entry in self._entries), self._entries.maxlen)

    def snapshot(self) -> list[Entry]:
        """Every entry still in the log."""
        with self._lock:
            return list(self._entries)

    async def wait(self, timeout: float | None) -> bool:
        """Waits until something is added or the log ends; False on timeout."""
        future: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append(future)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return False
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(future)
        return True

    async def started(self, timeout: float) -> str | None:
        """The invocation id once known; None when the run ended before it started.

        Raises:
            TimeoutError: neither happened within ``timeout`` seconds.
        """
        return await asyncio.wait_for(asyncio.shield(self._started), timeout)

    # -- on the loop ----------------------------------------------------------------------
    def _call_soon(self, fn: Callable[[], None]) -> None:
        # A loop that has closed (server shut down) has nobody left to wake.
        with contextlib.suppress(RuntimeError):
            if threading.get_ident() == self._loop_thread:
                # On the loop already (a run's end is applied there): no wake-up write.
                self._loop.call_soon(fn)
            else:
                self._loop.call_soon_threadsafe(fn)

    def _end_on_loop(self) -> None:
        self._wake()
        self._resolve_started()

    def _wake(self) -> None:
        with self._lock:
            self._wake_scheduled = False
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def _resolve_started(self) -> None:
        if self.finished and not self.ended.done():
            self.ended.set_result(None)
        if self._started.done():
            return
        if self.invocation_id is not None or self.finished:
            self._started.set_result(self.invocation_id)
