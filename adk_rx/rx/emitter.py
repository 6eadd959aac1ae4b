"""``from_emitter``: a stream fed from callbacks on many threads, owning the sources that feed it.

A live session is fed by several hot sources at once (the user's request queue, the model
connection, tools finishing on the I/O pool) and its subscriber takes one notification at a
time. ``from_emitter(start)`` calls ``start`` with an :class:`Emitter` per subscription:

* what it pushes is delivered in order, one notification at a time: a thread that finds
  delivery busy leaves its item queued and returns, and the delivering thread delivers it
  next (a queue-drain; no scheduler, no thread hop);
* the sources it follows belong to the stream: a source's error fails the stream, and failing
  or disposing the stream disposes every source still running, then runs the teardowns given
  to :meth:`Emitter.on_dispose`;
* :meth:`Emitter.purge` drops items still waiting for delivery (a barged-in answer's chunks).

Marble diagram (two followed sources feeding the stream)::

    follow(a):      --1-----2|
    follow(b):         -x--------y|
    complete():                     ^
    from_emitter:   --1-x---2----y--|

    purge(drop) while delivery is busy with p1:
    pushed:         -p1-p2-!-p3-i-|
    delivered:      -p1----!----i-|     (p2 and p3 purged; ``!`` kept)

After a failure or a disposal, nothing new is pushed or followed; a failure is delivered after
what was pushed before it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SerialDisposable

__all__ = ["Emitter", "from_emitter"]

T = TypeVar("T")
R = TypeVar("R")


class _End:
    """A terminal notification waiting in the queue."""

    __slots__ = ("error",)

    def __init__(self, error: Exception | None) -> None:
        self.error = error


def _ignore(_: Any) -> None:
    pass


class Emitter(Generic[T]):
    """What ``start`` feeds one subscription of :func:`from_emitter` through."""

    __slots__ = (
        "_busy",
        "_ended",
        "_lock",
        "_observer",
        "_queue",
        "_sources",
        "_stopped",
        "_teardowns",
    )

    def __init__(self, observer: abc.ObserverBase[T]) -> None:
        self._observer = observer
        self._lock = threading.Lock()
        self._queue: deque[T | _End] = deque()
        self._busy = False
        self._ended = False  # a terminal notification is queued or delivered
        self._stopped = False  # failed or disposed: nothing new starts
        self._sources = CompositeDisposable()
        self._teardowns: list[Callable[[], None]] = []

    @property
    def is_stopped(self) -> bool:
        """True once the stream failed or was disposed."""
        return self._stopped

    # -- out: to the subscriber ------------------------------------------------------------
    def push(self, item: T) -> None:
        """Delivers ``item`` after everything pushed before it (dropped once stopped)."""
        if not self._stopped:
            self._offer(item)

    def complete(self) -> None:
        """Completes the stream after what was pushed before."""
        self._offer(_End(None))

    def fail(self, error: Exception) -> None:
        """Errors the stream after what was pushed before, then disposes its sources (once)."""
        if self._stopped:
            return
        self._offer(_End(error))
        self.dispose()

    def purge(self, drop: Callable[[T], bool]) -> int:
        """Drops the items still waiting for delivery that ``drop`` picks; returns how many."""
        with self._lock:
            kept: deque[T | _End] = deque(
                item for item in self._queue if isinstance(item, _End) or not drop(item)
            )
            dropped = len(self._queue) - len(kept)
            self._queue = kept
        return dropped

    def _offer(self, item: T | _End) -> None:
        with self._lock:
            if self._ended:
                return
            if isinstance(item, _End):
                self._ended = True
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
            if not isinstance(item, _End):
                self._observer.on_next(item)
            elif item.error is None:
                self._observer.on_completed()
            else:
                self._observer.on_error(item.error)

    # -- in: the sources that feed it ------------------------------------------------------
    def follow(
        self,
        source: Observable[R],
        on_next: Callable[[R], None] = _ignore,
        on_completed: Callable[[], None] | None = None,
    ) -> abc.DisposableBase:
        """Subscribes ``source`` for the stream: its error fails the stream; it is held until
        it terminates, the returned handle is disposed, or the stream stops."""
        if self._stopped:
            return Disposable()
        holder = SerialDisposable()
        self._sources.add(holder)

        def completed() -> None:
            self._sources.remove(holder)
            if on_completed is not None:
                on_completed()

        holder.disposable = source.subscribe(on_next, self.fail, completed)

        def release() -> None:
            self._sources.remove(holder)

        return Disposable(release)

    def on_dispose(self, teardown: Callable[[], None]) -> None:
        """Runs ``teardown`` when the stream fails or is disposed, after its sources stopped."""
        self._teardowns.append(teardown)

    def dispose(self) -> None:
        """Stops the stream's sources, then runs the teardowns (once)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._sources.dispose()
        for teardown in self._teardowns:
            teardown()


def from_emitter(start: Callable[[Emitter[T]], None]) -> Observable[T]:
    """A cold stream fed through an :class:`Emitter`; ``start`` is called per subscription.

    An exception ``start`` raises fails the stream. Disposing the subscription disposes the
    emitter (its sources, then its teardowns).
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        emitter: Emitter[T] = Emitter(observer)
        try:
            start(emitter)
        except Exception as exc:
            emitter.fail(exc)
        return Disposable(emitter.dispose)

    return Observable(subscribe)
