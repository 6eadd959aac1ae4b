"""Closing a Runner: refuse new runs, let running ones end, then cancel what is left.

::

    close(timeout=5)   |-- new subscriptions: RunnerClosedError
    run A  ----------------o                       (ends on its own: kept whole)
    run B  ---------------------------X            (still going at the deadline: cancelled,
                                      |             CANCELLED records stored, its subscriber
                                      |             gets InvocationCancelledError)
           |<-------- timeout ------->|<- grace ->|  close() returns
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["RunTracker"]

CANCEL_GRACE = 10.0
"""Seconds ``close`` waits, after cancelling, for cancelled runs to store their records."""


class _Run(Protocol):
    def shut_down(self) -> None: ...


class RunTracker:
    """The runs of one Runner that are waiting or running, and whether it still takes runs.

    Attributes:
        cancelling: True once :meth:`close` cancels the runs left: a queued run must not start.
    """

    def __init__(self) -> None:
        # A plain lock under the condition: admit() and finished() run twice per run and
        # take it as a C call (a Condition's own with-statement costs four Python calls).
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        # The runs counted in (a dict as an ordered set: adding and removing cost no call).
        self._active: dict[_Run, None] = {}
        self._closed = False
        self.cancelling = False  # an attribute, not a property: every run reads it as it starts

    @property
    def closed(self) -> bool:
        """True once :meth:`close` began."""
        return self._closed

    def admit(self, run: _Run) -> bool:
        """Counts ``run`` in; False when the Runner is closed (the run must not start)."""
        with self._lock:
            if self._closed:
                return False
            self._active[run] = None
            return True

    def finished(self, run: _Run) -> None:
        """``run`` let go of its session (it ended, failed or was cancelled)."""
        with self._lock:
            active = self._active
            if run in active:
                del active[run]
            if self._closed:  # only close() waits for runs to end
                self._changed.notify_all()

    def close(self, timeout: float | None) -> None:
        """Refuses new runs, waits up to ``timeout`` seconds (None: no limit) for the running
        ones, then cancels the rest and waits for their records to be stored."""
        with self._changed:
            self._closed = True
            self._wait_idle(timeout)
            self.cancelling = True
            left = list(self._active)
        for run in left:
            run.shut_down()
        with self._changed:
            self._wait_idle(CANCEL_GRACE)

    def _wait_idle(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._active:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return
            self._changed.wait(remaining)
