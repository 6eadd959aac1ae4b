"""Per-session turn order within one process: each run waits for the one before it."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Gate", "SessionGates", "SessionKey"]

SessionKey = tuple[str, str, str]
"""(app name, user id, session id)."""


_GATES_LOCK = threading.Lock()
"""One lock for every Gate and every SessionGates: each holds it for a few attribute writes
and runs nothing under it, and a thousand runs waiting on their models then keep no lock each
(a run's leave updates its session's queue and opens its gate under one hold)."""


def _nothing() -> None:
    pass


class Gate:
    """Opens once; callbacks run exactly once, on the thread that opens it (or at once)."""

    __slots__ = ("_opened", "_waiters")

    def __init__(self) -> None:
        self._opened = False
        # Made with the first waiter: most gates never get one.
        self._waiters: list[Callable[[], None]] | None = None

    def when_open(self, fn: Callable[[], None]) -> Callable[[], None]:
        with _GATES_LOCK:
            if not self._opened:
                if self._waiters is None:
                    self._waiters = []
                self._waiters.append(fn)

                def cancel() -> None:
                    with _GATES_LOCK:
                        if self._waiters is not None and fn in self._waiters:
                            self._waiters.remove(fn)

                return cancel
        fn()
        return _nothing

    def open(self) -> None:
        with _GATES_LOCK:
            if self._opened:
                return
            self._opened = True
            waiters, self._waiters = self._waiters, None
        for fn in waiters or ():
            fn()


class SessionGates:
    """Serialises runs on one session within a process: each waits for the one before."""

    def __init__(self) -> None:
        self._tails: dict[SessionKey, Gate] = {}

    def enter(self, key: SessionKey) -> tuple[Gate | None, Gate]:
        """Queues a run on ``key``: (the gate of the run before it or None, its own gate)."""
        mine = Gate()
        with _GATES_LOCK:
            previous = self._tails.get(key)
            self._tails[key] = mine
        return previous, mine

    def leave(self, key: SessionKey, gate: Gate) -> None:
        """The run of ``gate`` lets go of ``key``: the run after it (if any) may start."""
        tails = self._tails
        with _GATES_LOCK:
            if key in tails and tails[key] is gate:
                del tails[key]
            # (gate.open(), inline: once per run)
            if gate._opened:  # pyright: ignore[reportPrivateUsage]
                return
            gate._opened = True  # pyright: ignore[reportPrivateUsage]
            waiters, gate._waiters = gate._waiters, None  # pyright: ignore[reportPrivateUsage]
        for fn in waiters or ():
            fn()

    def busy(self, key: SessionKey) -> bool:
        """True while a run on that session is queued or running."""
        with _GATES_LOCK:
            return key in self._tails

    def when_idle(self, key: SessionKey, fn: Callable[[], None]) -> None:
        """Calls ``fn`` once every run queued on the session so far has released it."""
        previous, mine = self.enter(key)

        def after() -> None:
            self.leave(key, mine)
            fn()

        if previous is None:
            after()
        else:
            previous.when_open(after)
