"""``PendingResult``: a Single's outcome, read at once or waited for.

The session writer appends each event to the store. An in-memory store answers while it is
subscribed, and the writer goes on with the stored event as a plain value; a SQL store answers
later, on another thread, and only then is a subject made, which the writer's next stage and
a stop (which waits for the append in flight) subscribe to::

    source:        --e|                  (answered while subscribed)
    result_now():  e                     (no subject is ever made)

    source:        --------e|            (answered later)
    result_now():  None; subject:  --------e|
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from reactivex.subject import AsyncSubject

__all__ = ["PendingResult"]

T = TypeVar("T")


class PendingResult(Generic[T]):
    """The outcome of one Single, subscribed as an observer: read at once when the source
    answered synchronously, or through a subject (created only then) for whoever waits.

    Args:
        track: called with the item before it is recorded (on the thread that delivers it).
    """

    __slots__ = ("_done", "_error", "_lock", "_subject", "_track", "_value")

    def __init__(self, track: Callable[[T], None]) -> None:
        self._lock = threading.Lock()
        self._track = track
        self._value: T | None = None
        self._error: Exception | None = None
        self._done = False
        self._subject: AsyncSubject[T] | None = None

    def on_next(self, value: T) -> None:
        self._track(value)
        with self._lock:
            self._value = value
            subject = self._subject
        if subject is not None:
            subject.on_next(value)

    def on_error(self, error: Exception) -> None:
        with self._lock:
            self._error, self._done = error, True
            subject = self._subject
        if subject is not None:
            subject.on_error(error)

    def on_completed(self) -> None:
        with self._lock:
            self._done = True
            subject = self._subject
        if subject is not None:
            subject.on_completed()

    def result_now(self) -> T | None:
        """The item, if the source already succeeded."""
        with self._lock:
            if self._done and self._error is None and self._value is not None:
                return self._value
            return None

    @property
    def subject(self) -> AsyncSubject[T]:
        """A subject replaying the outcome, whether it happened already or happens later."""
        with self._lock:
            if self._subject is None:
                # Nobody observes the new subject yet, so replaying under the lock runs no
                # observer code, and the callbacks above cannot slip in between.
                subject: AsyncSubject[T] = AsyncSubject()
                if self._value is not None:
                    subject.on_next(self._value)
                if self._error is not None:
                    subject.on_error(self._error)
                elif self._done:
                    subject.on_completed()
                self._subject = subject
            return self._subject
