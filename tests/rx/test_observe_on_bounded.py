from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import operators as ops
from reactivex.scheduler import EventLoopScheduler
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from adk_rx.errors import BackpressureError
from adk_rx.rx import observe_on_bounded

from ._support import WAIT, Burst, ThreadProducer, disposal_probe

pytestmark = pytest.mark.timeout(20)


def test_drop_oldest_keeps_the_newest_items(consumer_scheduler: EventLoopScheduler) -> None:
    burst = Burst(observe_on_bounded(consumer_scheduler, 10, "drop_oldest"))
    assert burst.items == [0, *range(91, 101)]
    assert burst.completed


def test_drop_latest_evicts_the_newest_waiting_item(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    evicted: list[int] = []
    burst = Burst(
        observe_on_bounded(consumer_scheduler, 10, "drop_latest", on_overflow=evicted.append)
    )
    assert burst.items == [0, *range(1, 10), 100]
    assert evicted == list(range(10, 100))


def test_error_signals_backpressure_error_and_disposes_upstream(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    burst = Burst(observe_on_bounded(consumer_scheduler, 10, "error"))
    assert burst.items == [0]
    assert isinstance(burst.errors[0], BackpressureError)
    assert burst.upstream_disposed.is_set()


def test_block_is_lossless_ordered_and_bounded(consumer_scheduler: EventLoopScheduler) -> None:
    delivered = 0
    producer = ThreadProducer(2000, consumed=lambda: delivered)
    received: list[int] = []
    done = threading.Event()

    def on_next(item: int) -> None:
        nonlocal delivered
        delivered += 1
        received.append(item)

    producer.observable().pipe(observe_on_bounded(consumer_scheduler, 8, "block")).subscribe(
        on_next, on_completed=done.set
    )
    assert done.wait(WAIT)
    assert received == list(range(2000))
    # 8 waiting in the buffer plus the one the producer holds while it waits for room.
    assert max(producer.lags) <= 8 + 1
    producer.join()


def test_items_reach_the_consumer_on_the_scheduler_thread(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    threads: set[int] = set()
    done = threading.Event()
    rx.from_iterable(range(3000)).pipe(observe_on_bounded(consumer_scheduler, 16)).subscribe(
        lambda _: threads.add(threading.get_ident()), on_completed=done.set
    )
    assert done.wait(WAIT)
    assert threading.get_ident() not in threads
    assert len(threads) == 1


def test_block_fails_instead_of_deadlocking_when_the_producer_is_the_consumer_thread(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    subject: Subject[int] = Subject()
    errors: list[Exception] = []
    ended = threading.Event()

    def on_next(item: int) -> None:
        if item == 0:
            for i in range(1, 10):  # re-entrant pushes from the consumer's own thread
                subject.on_next(i)

    subject.pipe(observe_on_bounded(consumer_scheduler, 4, "block")).subscribe(
        on_next, lambda e: (errors.append(e), ended.set())
    )
    subject.on_next(0)
    assert ended.wait(WAIT)
    assert isinstance(errors[0], BackpressureError)


def test_block_fails_instead_of_deadlocking_on_an_event_loop_thread(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    release = threading.Event()
    errors: list[Exception] = []
    ended = threading.Event()
    subject: Subject[int] = Subject()
    subject.pipe(observe_on_bounded(consumer_scheduler, 2, "block")).subscribe(
        lambda _: release.wait(WAIT), lambda e: (errors.append(e), ended.set())
    )

    async def push() -> None:
        for i in range(5):
            subject.on_next(i)

    asyncio.run(push())
    release.set()
    assert ended.wait(WAIT)
    assert isinstance(errors[0], BackpressureError)


def test_block_timeout_turns_a_stuck_consumer_into_an_error(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    release = threading.Event()
    errors: list[Exception] = []
    ended = threading.Event()
    subject: Subject[int] = Subject()
    subject.pipe(observe_on_bounded(consumer_scheduler, 1, "block", block_timeout=0.05)).subscribe(
        lambda _: release.wait(WAIT), lambda e: (errors.append(e), ended.set())
    )
    for i in range(3):  # 0 occupies the consumer, 1 waits, 2 times out
        subject.on_next(i)
    release.set()
    assert ended.wait(WAIT)
    assert isinstance(errors[0], BackpressureError)


def test_consumer_exception_becomes_on_error_and_the_scheduler_survives(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    source, upstream_disposed = disposal_probe(rx.never())
    errors: list[Exception] = []
    ended = threading.Event()
    subject: Subject[int] = Subject()
    rx.merge(source, subject).pipe(observe_on_bounded(consumer_scheduler, 4)).subscribe(
        lambda _: 1 / 0, lambda e: (errors.append(e), ended.set())
    )
    subject.on_next(1)
    assert ended.wait(WAIT)
    assert isinstance(errors[0], ZeroDivisionError)
    assert upstream_disposed.is_set()
    still_running = threading.Event()
    consumer_scheduler.schedule(lambda *_: still_running.set())
    assert still_running.wait(WAIT)


def test_dispose_clears_the_buffer_and_releases_a_blocked_producer(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    started, release = threading.Event(), threading.Event()
    received: list[int] = []

    def on_next(item: int) -> None:
        received.append(item)
        started.set()
        release.wait(WAIT)

    producer = ThreadProducer(1000)
    subscription = (
        producer.observable()
        .pipe(observe_on_bounded(consumer_scheduler, 4, "block"))
        .subscribe(on_next)
    )
    assert started.wait(WAIT)
    subscription.dispose()
    assert producer.finished.wait(WAIT)  # it was blocked in on_next and got out
    release.set()
    drained = threading.Event()
    consumer_scheduler.schedule(lambda *_: drained.set())
    assert drained.wait(WAIT)
    assert received == [0]
    assert producer.produced <= 4 + 2
    producer.join()


class CountingScheduler(TestScheduler):
    """A virtual-time scheduler that counts the actions scheduled on it."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduled = 0

    def schedule_absolute(self, duetime: Any, action: Any, state: Any = None) -> Any:
        self.scheduled += 1
        return super().schedule_absolute(duetime, action, state)


def test_nothing_is_delivered_until_the_virtual_clock_runs() -> None:
    scheduler = TestScheduler()
    received: list[int] = []
    rx.from_iterable(range(10)).pipe(observe_on_bounded(scheduler, 10)).subscribe(received.append)
    assert received == []
    scheduler.advance_by(1)
    assert received == list(range(10))


def test_drain_is_scheduled_once_per_burst() -> None:
    scheduler = CountingScheduler()
    subject: Subject[int] = Subject()
    received: list[int] = []
    subject.pipe(observe_on_bounded(scheduler, 100, "error")).subscribe(received.append)
    for i in range(50):
        subject.on_next(i)
    assert scheduler.scheduled == 1
    scheduler.advance_by(1)
    assert received == list(range(50))
    subject.on_next(50)  # idle again: the next burst schedules one more drain
    assert scheduler.scheduled == 2


def test_a_long_burst_yields_the_scheduler_between_batches() -> None:
    scheduler = TestScheduler()
    received: list[int] = []
    seen_by_other_work: list[int] = []
    rx.from_iterable(range(3000)).pipe(observe_on_bounded(scheduler, 5000, "error")).subscribe(
        received.append
    )
    scheduler.schedule(lambda *_: seen_by_other_work.append(len(received)))
    scheduler.advance_by(1)
    assert received == list(range(3000))
    assert 0 < seen_by_other_work[0] < 3000


def test_stock_pipeline_operators_compose(consumer_scheduler: EventLoopScheduler) -> None:
    result = (
        rx.from_iterable(range(100))
        .pipe(observe_on_bounded(consumer_scheduler, 8), ops.filter(lambda x: x % 2 == 0))
        .pipe(ops.to_list())
        .run()
    )
    assert result == list(range(0, 100, 2))
