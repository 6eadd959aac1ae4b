"""``serialize`` and ``SerializedSubject``: one notification at a time from many threads.

RxPY's ``Subject`` delivers outside its lock, so ``on_next`` calls from several threads reach
its observers concurrently, and simple operators (``map``, ``scan``, ``take``) are not made for
that. These helpers restore the Rx grammar with a lossless queue-drain: a caller that finds
delivery busy leaves its item in the queue and returns; the busy thread delivers it next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from reactivex import Observable, abc
from reactivex.subject import Subject

from adk_rx.rx._engine.queue_drain import QueueDrainObserver, queue_drain

__all__ = ["SerializedSubject", "serialize"]

T = TypeVar("T")


def serialize() -> Callable[[Observable[T]], Observable[T]]:
    """Delivers the source's notifications one at a time, whatever thread sends them.

    Order per producer thread is kept; no item is dropped and no producer waits.

    Marble diagram::

        thread 1:     -a---c-----|
        thread 2:     --b----d-|
        serialize():  -a-b-c-d---|     (never two on_next calls at once; completes once)

    Returns:
        The operator.
    """
    return queue_drain(None, "error")


class _SubjectSink(abc.ObserverBase[T], Generic[T]):
    """Forwards to the broadcasting methods of the subject it belongs to."""

    def __init__(self, subject: SerializedSubject[T]) -> None:
        self._subject = subject

    def on_next(self, value: T) -> None:
        Subject.on_next(self._subject, value)

    def on_error(self, error: Exception) -> None:
        Subject.on_error(self._subject, error)

    def on_completed(self) -> None:
        Subject.on_completed(self._subject)


class SerializedSubject(Subject[T], Generic[T]):
    """A ``Subject`` whose ``on_next`` / ``on_error`` / ``on_completed`` may be called from
    many threads at once: its observers still see one notification at a time.

    A caller that finds delivery busy returns at once, so an observer's exception reaches no
    caller: it ends the subject with that error instead, for every observer.

    Marble diagram::

        on_next from thread 1:  -a---c---
        on_next from thread 2:  --b----d-
        every observer:         -a-b-c-d-    (serialized, lossless)
    """

    def __init__(self) -> None:
        super().__init__()
        self._serializer: QueueDrainObserver[T] = QueueDrainObserver(
            _SubjectSink(self), None, "error"
        )

    def on_next(self, value: T) -> None:
        self.check_disposed()
        self._serializer.on_next(value)

    def on_error(self, error: Exception) -> None:
        self.check_disposed()
        self._serializer.on_error(error)

    def on_completed(self) -> None:
        self.check_disposed()
        self._serializer.on_completed()
