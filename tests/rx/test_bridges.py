from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.testing import TestScheduler

from adk_rx.rx import from_blocking, from_blocking_iterable

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def one_worker() -> Iterator[ThreadPoolScheduler]:
    scheduler = ThreadPoolScheduler(1)
    yield scheduler
    scheduler.executor.shutdown(wait=True)


def flush(pool: ThreadPoolScheduler) -> None:
    """Waits until everything submitted to a one-worker pool before this call has finished."""
    pool.executor.submit(lambda: None).result(WAIT)


def test_from_blocking_is_cold_and_runs_once_per_subscription() -> None:
    calls: list[int] = []

    def call() -> int:
        calls.append(threading.get_ident())
        return len(calls)

    single = from_blocking(call)
    assert calls == []
    assert single.run() == 1
    assert single.run() == 2
    assert threading.get_ident() not in calls


def test_from_blocking_turns_an_exception_into_on_error() -> None:
    def fail() -> int:
        raise KeyError("missing")

    with pytest.raises(KeyError):
        from_blocking(fail).run()


def test_from_blocking_drops_the_result_after_dispose(one_worker: ThreadPoolScheduler) -> None:
    running, release = threading.Event(), threading.Event()
    received: list[object] = []

    def call() -> str:
        running.set()
        release.wait(WAIT)
        return "late"

    subscription = from_blocking(call, one_worker).subscribe(
        received.append, received.append, lambda: received.append("completed")
    )
    assert running.wait(WAIT)
    subscription.dispose()
    release.set()
    flush(one_worker)
    assert received == []


def test_from_blocking_disposed_before_it_starts_never_calls(
    one_worker: ThreadPoolScheduler,
) -> None:
    release = threading.Event()
    one_worker.executor.submit(release.wait, WAIT)  # occupy the only worker
    calls: list[int] = []
    from_blocking(lambda: calls.append(1), one_worker).subscribe().dispose()
    release.set()
    flush(one_worker)
    assert calls == []


def test_from_blocking_runs_on_a_virtual_time_scheduler() -> None:
    scheduler = TestScheduler()
    received: list[int] = []
    from_blocking(lambda: 7, scheduler).subscribe(received.append)
    assert received == []
    scheduler.advance_by(1)
    assert received == [7]


def test_from_blocking_iterable_emits_every_item_in_order() -> None:
    result = from_blocking_iterable(lambda: iter(range(500))).pipe(ops.to_list()).run()
    assert result == list(range(500))


def test_from_blocking_iterable_dispose_stops_at_the_next_item_and_closes_the_generator(
    one_worker: ThreadPoolScheduler,
) -> None:
    pulled: list[int] = []
    closed = threading.Event()
    reached, disposed = threading.Event(), threading.Event()
    k = 5

    def generate() -> Iterator[int]:
        try:
            for i in range(10_000):
                pulled.append(i)
                yield i
        finally:
            closed.set()

    def on_next(item: int) -> None:
        if item == k - 1:
            reached.set()
            disposed.wait(WAIT)  # hold the producer until the foreign dispose is done

    subscription = from_blocking_iterable(generate, one_worker).subscribe(on_next)
    assert reached.wait(WAIT)
    subscription.dispose()  # from this (foreign) thread
    disposed.set()
    assert closed.wait(WAIT)
    assert len(pulled) <= k + 1


def test_from_blocking_iterable_dispose_inside_on_next_pulls_nothing_more(
    one_worker: ThreadPoolScheduler,
) -> None:
    pulled: list[int] = []
    received: list[int] = []

    def generate() -> Iterator[int]:
        for i in range(10_000):
            pulled.append(i)
            yield i

    # Hold the worker until the subscription chain is wired, so take(3) can reach upstream.
    release = threading.Event()
    one_worker.executor.submit(release.wait, WAIT)
    from_blocking_iterable(generate, one_worker).pipe(ops.take(3)).subscribe(received.append)
    release.set()
    flush(one_worker)
    assert received == [0, 1, 2]
    assert pulled == [0, 1, 2]


def test_from_blocking_iterable_error_from_the_iterator_becomes_on_error() -> None:
    def generate() -> Iterator[int]:
        yield 1
        raise ValueError("bad row")

    received: list[Any] = []
    with pytest.raises(ValueError):
        from_blocking_iterable(generate).pipe(ops.do_action(received.append)).run()
    assert received == [1]
