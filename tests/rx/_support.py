"""Small fakes shared by the adk_rx.rx tests: observable sources that report on themselves."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import reactivex as rx
from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.subject import Subject

WAIT = 5.0  # seconds; only ever reached when a test is about to fail


class ThreadProducer:
    """A cooperative producer that emits ``range(count)`` from a thread of its own.

    Attributes:
        produced: how many items were handed to ``on_next`` (counted before the call).
        disposed: set when the subscription's disposable ran.
        finished: set when the producer thread left its loop.
        lags: ``produced - consumed()`` right before each ``on_next``.
    """

    def __init__(self, count: int, consumed: Callable[[], int] | None = None) -> None:
        self.count = count
        self.produced = 0
        self.disposed = threading.Event()
        self.finished = threading.Event()
        self.lags: list[int] = []
        self._consumed = consumed
        self.threads: list[threading.Thread] = []

    def observable(self) -> Observable[int]:
        def subscribe(observer: abc.ObserverBase[int], _: Any = None) -> abc.DisposableBase:
            def run() -> None:
                try:
                    for i in range(self.count):
                        if self.disposed.is_set():
                            return
                        self.produced += 1
                        if self._consumed is not None:
                            self.lags.append(self.produced - self._consumed())
                        observer.on_next(i)
                    observer.on_completed()
                finally:
                    self.finished.set()

            thread = threading.Thread(target=run, daemon=True)
            self.threads.append(thread)
            thread.start()
            return Disposable(self.disposed.set)

        return rx.create(subscribe)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(WAIT)


def disposal_probe(source: Observable[Any]) -> tuple[Observable[Any], threading.Event]:
    """Wraps ``source`` so the returned event is set when its subscription is disposed."""
    disposed = threading.Event()

    def subscribe(observer: abc.ObserverBase[Any], scheduler: Any = None) -> abc.DisposableBase:
        inner = source.subscribe(observer, scheduler=scheduler)

        def dispose() -> None:
            disposed.set()
            inner.dispose()

        return Disposable(dispose)

    return rx.create(subscribe), disposed


def counting(count: int, log: list[int]) -> Iterator[int]:
    """A generator of ``range(count)`` that records every item it yields in ``log``."""
    for i in range(count):
        log.append(i)
        yield i


def new_threads(baseline: set[threading.Thread]) -> list[threading.Thread]:
    """The live threads that were not in ``baseline``."""
    return [t for t in threading.enumerate() if t not in baseline]


class Burst:
    """Item 0 occupies the consumer; items 1..100 are pushed meanwhile; then it is released.

    Item 0 is pushed from a helper thread (so with a scheduler-less operator that thread is
    the one stuck in the consumer) and items 1..100 and completion from the calling thread.
    """

    def __init__(self, operator: Callable[[Observable[int]], Observable[int]]) -> None:
        self.items: list[int] = []
        self.errors: list[Exception] = []
        self.completed = False
        self.dropped: list[int] = []
        subject: Subject[int] = Subject()
        source, self.upstream_disposed = disposal_probe(subject)
        started, release, ended = threading.Event(), threading.Event(), threading.Event()

        def on_next(item: int) -> None:
            self.items.append(item)
            if item == 0:
                started.set()
                release.wait(WAIT)

        def on_error(error: Exception) -> None:
            self.errors.append(error)
            ended.set()

        def on_completed() -> None:
            self.completed = True
            ended.set()

        source.pipe(operator).subscribe(on_next, on_error, on_completed)
        first = threading.Thread(target=subject.on_next, args=(0,))
        first.start()
        assert started.wait(WAIT)
        for i in range(1, 101):
            subject.on_next(i)
        subject.on_completed()
        release.set()
        assert ended.wait(WAIT)
        first.join(WAIT)
