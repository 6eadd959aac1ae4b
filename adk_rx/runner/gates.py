"""Per-session turn order within one process: each run waits for the one before it."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Gate", "SessionGates", "SessionKey"]

SessionKey = tuple[str, str, str]
"""(app name, user id, session id)."""


class Gate:
    """Opens once; callbacks run exactly once, on the thread that opens it (or at once)."""

    __slots__ = ("_lock", "_opened", "_waiters")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._opened = False
        self._waiters: list[Callable[[], None]] = []

    def when_open(self, fn: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            if not self._opened:
                self._waiters.append(fn)

                def cancel() -> None:
                    with self._lock:
                        if fn in self._waiters:
                            self._waiters.remove(fn)

                return cancel
        fn()
        return lambda: None

    def open(self) -> None:
        with self._lock:
            if self._opened:
                return
            self._opened = True
            waiters, self._waiters = self._waiters, []
        for fn in waiters:
            fn()


class SessionGates:
    """Serialises runs on one session within a process: each waits for the one before."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tails: dict[SessionKey, Gate] = {}

    def enter(self, key: SessionKey) -> tuple[Gate | None, Gate]:
        mine = Gate()
        with self._lock:
            previous = self._tails.get(key)
            self._tails[key] = mine
        return previous, mine

    def leave(self, key: SessionKey, gate: Gate) -> None:
        with self._lock:
            if self._tails.get(key) is gate:
                del self._tails[key]
        gate.open()

    def busy(self, key: SessionKey) -> bool:
        """True while a run on that session is queued or running."""
        with self._lock:
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
