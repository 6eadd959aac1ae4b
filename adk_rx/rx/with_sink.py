"""``with_sink``: a stream, with what its producer sends to a side channel emitted in between.

Some work reports as it goes (a tool's progress, a child run's events) besides the items its
Observable ends with. ``with_sink(build)`` hands ``build`` a sink; whatever is sent to it while
the stream runs is emitted at once, serialized with the stream's own items (a report from a
tool on another thread never overlaps an item). Stock ``merge`` with a ``Subject`` comes close,
but keeps emitting reports after the stream ended unless each report is checked against a flag
the subject does not have.

Marble diagram (``p`` sent to the sink)::

    build(sink):   --a--------b-----|
    sink:              -p1--p2    p3         (p3 after completion: dropped)
    with_sink:     --a--p1--p2-b-----|

A report sent after the stream completed, failed or was disposed is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable

__all__ = ["with_sink"]

T = TypeVar("T")

Sink = Callable[[T], None]


def with_sink(build: Callable[[Sink[T]], Observable[T]]) -> Observable[T]:
    """The items of ``build(sink)``, with whatever is sent to ``sink`` meanwhile in between.

    Args:
        build: called once per subscription with the sink; returns the stream.
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        lock = threading.RLock()  # a sink called from inside on_next re-enters
        done = [False]

        def sink(item: T) -> None:
            with lock:
                if not done[0]:
                    observer.on_next(item)

        def on_next(item: T) -> None:
            with lock:
                observer.on_next(item)

        def on_error(exc: Exception) -> None:
            with lock:
                done[0] = True
            observer.on_error(exc)

        def on_completed() -> None:
            with lock:
                done[0] = True
            observer.on_completed()

        def stop() -> None:
            done[0] = True

        inner = build(sink).subscribe(on_next, on_error, on_completed, scheduler=scheduler)
        return CompositeDisposable(Disposable(stop), inner)

    return Observable(subscribe)
