from __future__ import annotations

import threading

import pytest
import reactivex as rx
from reactivex import operators as ops
from reactivex.subject import Subject

from adk_rx.errors import BackpressureError
from adk_rx.rx import on_backpressure_buffer, on_backpressure_drop, on_backpressure_latest

from ._support import WAIT, Burst, ThreadProducer

pytestmark = pytest.mark.timeout(20)


def test_buffer_drop_oldest_keeps_the_newest_items() -> None:
    evicted: list[int] = []
    burst = Burst(on_backpressure_buffer(10, "drop_oldest", on_overflow=evicted.append))
    assert burst.items == [0, *range(91, 101)]
    assert evicted == list(range(1, 91))
    assert burst.completed


def test_buffer_drop_latest_evicts_the_newest_waiting_item() -> None:
    evicted: list[int] = []
    burst = Burst(on_backpressure_buffer(10, "drop_latest", on_overflow=evicted.append))
    assert burst.items == [0, *range(1, 10), 100]
    assert evicted == list(range(10, 100))
    assert burst.completed


def test_buffer_error_signals_backpressure_error_and_disposes_upstream() -> None:
    burst = Burst(on_backpressure_buffer(10))
    assert burst.items == [0]
    assert len(burst.errors) == 1
    assert isinstance(burst.errors[0], BackpressureError)
    assert burst.upstream_disposed.is_set()


def test_drop_with_capacity_keeps_the_first_items_that_fit() -> None:
    dropped: list[int] = []
    burst = Burst(on_backpressure_drop(dropped.append, capacity=10))
    assert burst.items == list(range(11))
    assert dropped == list(range(11, 101))


def test_drop_without_capacity_delivers_only_items_that_find_the_consumer_idle() -> None:
    burst = Burst(on_backpressure_drop())
    assert burst.items == [0]
    assert burst.completed


def test_latest_keeps_only_the_most_recent_item() -> None:
    burst = Burst(on_backpressure_latest())
    assert burst.items == [0, 100]


def test_items_pass_unchanged_when_the_consumer_keeps_up() -> None:
    items = rx.from_iterable(range(1000)).pipe(on_backpressure_buffer(1), ops.to_list()).run()
    assert items == list(range(1000))


def test_capacity_below_one_and_unknown_strategy_are_rejected() -> None:
    with pytest.raises(ValueError):
        on_backpressure_buffer(0)
    with pytest.raises(ValueError):
        on_backpressure_buffer(4, "block")  # type: ignore[arg-type]


def test_upstream_error_arrives_after_the_buffered_items() -> None:
    subject: Subject[int] = Subject()
    started, release, ended = threading.Event(), threading.Event(), threading.Event()
    seen: list[object] = []

    def on_next(item: int) -> None:
        seen.append(item)
        if item == 0:
            started.set()
            release.wait(WAIT)

    subject.pipe(on_backpressure_buffer(4)).subscribe(
        on_next, lambda e: (seen.append(e), ended.set())
    )
    first = threading.Thread(target=subject.on_next, args=(0,))
    first.start()
    assert started.wait(WAIT)
    subject.on_next(1)
    boom = RuntimeError("boom")
    subject.on_error(boom)
    release.set()
    assert ended.wait(WAIT)
    first.join(WAIT)
    assert seen == [0, 1, boom]


def test_consumer_exception_becomes_on_error_and_disposes_upstream() -> None:
    producer = ThreadProducer(10_000)
    errors: list[Exception] = []
    ended = threading.Event()

    def on_next(item: int) -> None:
        if item == 3:
            raise ZeroDivisionError

    producer.observable().pipe(on_backpressure_latest()).subscribe(
        on_next, lambda e: (errors.append(e), ended.set())
    )
    assert ended.wait(WAIT)
    assert isinstance(errors[0], ZeroDivisionError)
    assert producer.disposed.wait(WAIT)
    producer.join()
