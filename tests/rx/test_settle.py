"""settle: a source that answers while subscribed is a value already here; others go on."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import is_sync


def _create_now(*values: int) -> rx.Observable[int]:
    def subscribe(observer: Any, _: Any = None) -> Disposable:
        for value in values:
            observer.on_next(value)
        observer.on_completed()
        return Disposable()

    return rx.create(subscribe)


SYNC_SOURCES = {
    "just": lambda: rx.just(1),
    "of": lambda: rx.of(1, 2, 3),
    "create": lambda: _create_now(1, 2),
    "defer of": lambda: rx.defer(lambda _: rx.of(4, 5)),
    "mapped": lambda: rx.of(1, 2).pipe(ops.map(lambda x: x * 10)),
}


@pytest.mark.parametrize("name", sorted(SYNC_SOURCES))
def test_a_source_that_completes_while_subscribed_is_settled(name: str) -> None:
    expected = SYNC_SOURCES[name]().pipe(ops.to_list()).run()
    settled = settle(SYNC_SOURCES[name]())
    assert is_sync(settled)
    assert list(settled.items_now()) == expected


@pytest.mark.parametrize("name", sorted(SYNC_SOURCES))
def test_it_is_settled_inside_a_running_trampoline_too(name: str) -> None:
    # A run holds the thread's trampoline, where rx.just / rx.of would queue their items.
    found = rx.just(0).pipe(ops.flat_map(lambda _: rx.just(is_sync(settle(SYNC_SOURCES[name]())))))
    assert found.run() is True


def test_a_source_that_answers_later_is_continued_in_order() -> None:
    subject: Subject[int] = Subject()
    source = rx.concat(rx.of(1, 2), subject)
    settled = settle(source)
    assert not is_sync(settled)
    subject.on_next(3)  # before anyone took over: held
    got: list[int] = []
    done = threading.Event()
    settled.subscribe(got.append, on_completed=done.set)
    worker = threading.Thread(target=lambda: (subject.on_next(4), subject.on_completed()))
    worker.start()
    worker.join()
    assert done.is_set() and got == [1, 2, 3, 4]


def test_a_failure_is_continued_with_its_items_first() -> None:
    settled = settle(rx.concat(rx.of(1), rx.throw(ValueError("down"))))
    assert not is_sync(settled)
    got: list[Any] = []
    settled.subscribe(got.append, lambda e: got.append(repr(e)))
    assert got == [1, "ValueError('down')"]


def test_disposing_the_continuation_disposes_the_source() -> None:
    disposed = threading.Event()

    def subscribe(observer: Any, _: Any = None) -> Disposable:
        return Disposable(disposed.set)

    settled = settle(rx.create(subscribe))
    settled.subscribe(lambda _: None).dispose()
    assert disposed.is_set()


def test_a_source_built_from_a_timer_keeps_its_own_scheduler() -> None:
    settled = settle(rx.timer(0.01).pipe(ops.map(lambda _: "late")))
    assert not is_sync(settled)  # the timer runs on its timeout thread, not the caller's
    assert settled.pipe(ops.to_list()).run() == ["late"]


class _RunAhead:
    """A producer thread that emits ``count`` items at once into whoever subscribed it.

    ``paused`` is set when the producer finished, or when it waits on a condition (held back
    by the hand-over): a profile hook on its own thread sees the wait begin, so the test knows
    the producer went as far as it could without timing anything.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.produced = 0
        self.paused = threading.Event()
        self.finished = threading.Event()
        self.thread: threading.Thread | None = None

    def _watch(self, frame: Any, event: str, _: Any) -> None:
        if event == "call" and frame.f_code is threading.Condition.wait.__code__:
            self.paused.set()

    def observable(self) -> rx.Observable[int]:
        def subscribe(observer: Any, _: Any = None) -> Disposable:
            def run() -> None:
                sys.setprofile(self._watch)
                try:
                    for i in range(self.count):
                        self.produced += 1
                        observer.on_next(i)
                    observer.on_completed()
                finally:
                    sys.setprofile(None)
                    self.finished.set()
                    self.paused.set()

            self.thread = threading.Thread(target=run, daemon=True)
            self.thread.start()
            return Disposable()

        return rx.create(subscribe)


def test_a_thread_producer_is_held_back_until_someone_takes_over() -> None:
    producer = _RunAhead(1_000)
    settled = settle(producer.observable())
    producer.paused.wait()  # it ran as far ahead as the hand-over let it
    lags: list[int] = []
    settled.subscribe(lambda _: lags.append(producer.produced - len(lags) - 1))
    assert producer.thread is not None
    producer.thread.join()
    assert len(lags) == 1_000
    # a few items held for the step, one in the producer's hand: not the whole stream
    assert max(lags) <= 9


def test_disposing_while_taking_over_releases_a_held_back_producer() -> None:
    producer = _RunAhead(1_000)
    settled = settle(producer.observable())
    producer.paused.wait()
    got = settled.pipe(ops.take(2), ops.to_list()).run()
    assert got == [0, 1]
    assert producer.thread is not None
    producer.thread.join()  # released: it ran to its end, its items dropped
    assert producer.finished.is_set()


def test_a_producer_on_an_event_loop_is_never_held_back() -> None:
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    finished = threading.Event()

    def emit_all(observer: Any) -> None:
        for i in range(100):
            observer.on_next(i)
        observer.on_completed()
        finished.set()

    def subscribe(observer: Any, _: Any = None) -> Disposable:
        loop.call_soon_threadsafe(emit_all, observer)
        return Disposable()

    try:
        settled = settle(rx.create(subscribe))
        finished.wait()  # waiting would stall the loop: its items are held instead
        assert settled.pipe(ops.to_list()).run() == list(range(100))
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()
