"""Bulkhead: permits, release on completion / error / disposal, first come first served, a
full line, disposal while waiting; marble tests on a TestScheduler, and once with threads."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import reactivex as rx
from reactivex.notification import OnError
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.subscription import Subscription

from adk_rx import BulkheadFullError, ConfigurationError
from adk_rx.rx import Bulkhead

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_one_permit_runs_the_second_source_when_the_first_completes() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(1)
    a = scheduler.create_cold_observable(on_next(10, "a1"), on_completed(20))
    b = scheduler.create_cold_observable(on_next(10, "b1"), on_completed(20))

    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(100, lambda *_: a.pipe(bulkhead).subscribe(first))
    scheduler.schedule_absolute(105, lambda *_: b.pipe(bulkhead).subscribe(second))
    scheduler.start()

    assert first.messages == [on_next(110, "a1"), on_completed(120)]
    assert second.messages == [on_next(130, "b1"), on_completed(140)]  # started at 120
    assert a.subscriptions == [Subscription(100, 120)]
    assert b.subscriptions == [Subscription(120, 140)]
    assert (bulkhead.running, bulkhead.waiting) == (0, 0)


def test_an_error_gives_the_permit_back() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(1)
    boom = ValueError("boom")
    a = scheduler.create_cold_observable(on_error(10, boom))
    b = scheduler.create_cold_observable(on_next(5, "b1"), on_completed(6))

    first, second = scheduler.create_observer(), scheduler.create_observer()
    scheduler.schedule_absolute(100, lambda *_: a.pipe(bulkhead).subscribe(first))
    scheduler.schedule_absolute(101, lambda *_: b.pipe(bulkhead).subscribe(second))
    scheduler.start()

    assert first.messages == [on_error(110, boom)]
    assert second.messages == [on_next(115, "b1"), on_completed(116)]


def test_disposing_a_running_subscription_gives_the_permit_back() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(1)
    a = scheduler.create_cold_observable(on_next(100, "late"))  # never completes
    b = scheduler.create_cold_observable(on_next(1, "b1"), on_completed(2))
    second = scheduler.create_observer()
    running: list[Any] = []

    scheduler.schedule_absolute(100, lambda *_: running.append(a.pipe(bulkhead).subscribe()))
    scheduler.schedule_absolute(101, lambda *_: b.pipe(bulkhead).subscribe(second))
    scheduler.schedule_absolute(150, lambda *_: running[0].dispose())
    scheduler.start()

    assert a.subscriptions == [Subscription(100, 150)]
    assert second.messages == [on_next(151, "b1"), on_completed(152)]


def test_a_waiting_subscription_that_is_disposed_never_runs() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(1)
    a = scheduler.create_cold_observable(on_completed(50))
    b = scheduler.create_cold_observable(on_next(1, "b1"), on_completed(2))
    c = scheduler.create_cold_observable(on_next(1, "c1"), on_completed(2))
    waiting: list[Any] = []
    third = scheduler.create_observer()

    scheduler.schedule_absolute(100, lambda *_: a.pipe(bulkhead).subscribe())
    scheduler.schedule_absolute(101, lambda *_: waiting.append(b.pipe(bulkhead).subscribe()))
    scheduler.schedule_absolute(102, lambda *_: c.pipe(bulkhead).subscribe(third))
    scheduler.schedule_absolute(120, lambda *_: waiting[0].dispose())
    scheduler.start()

    assert b.subscriptions == []
    assert third.messages == [on_next(151, "c1"), on_completed(152)]


def test_waiting_subscriptions_start_first_come_first_served() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(2)
    order: list[int] = []
    sources = [
        scheduler.create_cold_observable(on_next(10, n), on_completed(10 + n)) for n in range(6)
    ]
    for n, source in enumerate(sources):
        scheduler.schedule_absolute(
            100 + n, lambda *_, s=source: s.pipe(bulkhead).subscribe(order.append)
        )
    scheduler.start()

    assert order == [0, 1, 2, 3, 4, 5]
    starts = [source.subscriptions[0].subscribe for source in sources]
    assert starts == sorted(starts)
    assert starts[:2] == [100, 101]  # the two permits, then each waiter as one frees


def test_a_full_line_errors_at_once_with_bulkhead_full() -> None:
    scheduler = TestScheduler()
    bulkhead = Bulkhead(1, max_waiting=1)
    slow = scheduler.create_cold_observable(on_completed(100))
    observers = [scheduler.create_observer() for _ in range(3)]
    for n, observer in enumerate(observers):
        scheduler.schedule_absolute(
            100 + n, lambda *_, o=observer: slow.pipe(bulkhead).subscribe(o)
        )
    scheduler.start()

    assert observers[0].messages == [on_completed(200)]
    assert observers[1].messages == [on_completed(300)]
    error = observers[2].messages[0]
    assert error.time == 102 and isinstance(error.value, OnError)
    assert isinstance(error.value.exception, BulkheadFullError)


def test_a_source_that_ends_at_once_releases_without_recursion() -> None:
    bulkhead = Bulkhead(1)
    results = [rx.of(n).pipe(bulkhead).run() for n in range(2_000)]

    assert results == list(range(2_000))
    assert (bulkhead.running, bulkhead.waiting) == (0, 0)


def test_rejects_nonsense_limits() -> None:
    with pytest.raises(ConfigurationError):
        Bulkhead(0)
    with pytest.raises(ConfigurationError):
        Bulkhead(1, max_waiting=-1)


def test_one_permit_over_100_concurrent_calls_on_threads_never_runs_two_at_once() -> None:
    pool = ThreadPoolScheduler(8)
    bulkhead = Bulkhead(1)
    lock = threading.Lock()
    inside, most = [0], [0]
    started: list[int] = []
    done = threading.Semaphore(0)

    def run(n: int) -> int:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            started.append(n)
        time.sleep(0.0002)  # hold the permit a moment, so the others pile up in line
        with lock:
            inside[0] -= 1
        return n

    results: list[int] = []
    for n in range(100):  # each call runs on a pool thread and frees its permit there
        source = rx.from_callable(lambda n=n: run(n), scheduler=pool)
        source.pipe(bulkhead).subscribe(results.append, on_completed=done.release)
    for _ in range(100):
        assert done.acquire(timeout=WAIT)

    assert most[0] == 1
    assert started == list(range(100))  # first come, first served
    assert sorted(results) == list(range(100))
    assert (bulkhead.running, bulkhead.waiting) == (0, 0)
