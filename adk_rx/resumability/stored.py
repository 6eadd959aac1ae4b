"""A barrier on the store: wait until one event of the invocation is durable.

A resumable app runs a function call's tools only once the event that carries the call is
stored, so that after a crash the stored log always holds the calls whose tools may have
run (and a resumed invocation never asks the model again for calls it already executed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

__all__ = ["StoredEvents"]


class StoredEvents:
    """Ids of the invocation's stored events, and waiters for the ones still on their way."""

    __slots__ = ("_ids", "_lock", "_waiters")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._waiters: dict[str, list[Callable[[], None]]] = {}

    def mark(self, event_id: str) -> None:
        """Records that the event is stored; releases its waiters."""
        with self._lock:
            self._ids.add(event_id)
            waiters = self._waiters.pop(event_id, [])
        for release in waiters:
            release()

    def wait(self, event_id: str) -> Observable[Any]:
        """A Completable that completes once the event is stored."""

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with self._lock:
                stored = event_id in self._ids
                if not stored:
                    self._waiters.setdefault(event_id, []).append(observer.on_completed)
            if stored:
                observer.on_completed()
            return Disposable()

        return Observable(subscribe)
