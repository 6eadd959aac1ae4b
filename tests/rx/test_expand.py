"""expand: items emitted and fed back through project, recursively, until all complete."""

from __future__ import annotations

import sys
import threading
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx import expand

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_each_item_is_projected_and_its_items_emitted_until_every_inner_completed() -> None:
    scheduler = TestScheduler()

    def countdown(n: int) -> Observable[int]:
        if n == 0:
            return rx.empty()
        return rx.timer(10.0, scheduler=scheduler).pipe(ops.map(lambda _: n - 1))

    source = scheduler.create_cold_observable(on_next(10, 2), on_completed(15))
    result = scheduler.start(lambda: source.pipe(expand(countdown)))

    assert result.messages == [
        on_next(210, 2),
        on_next(220, 1),
        on_next(230, 0),
        on_completed(230),
    ]


def test_the_result_waits_for_the_source_to_complete() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, 1), on_completed(100))
    result = scheduler.start(lambda: source.pipe(expand(lambda n: rx.empty())))
    assert result.messages == [on_next(210, 1), on_completed(300)]


def test_an_error_in_a_projected_stream_errors_the_result_and_disposes_the_others() -> None:
    scheduler = TestScheduler()
    error = RuntimeError("node failed")
    slow = scheduler.create_cold_observable(on_next(50, "late"), on_completed(60))
    failing = scheduler.create_cold_observable(on_error(20, error))

    def project(item: str) -> Observable[str]:
        return {"root": rx.of("slow", "fail")}.get(item) or {"slow": slow, "fail": failing}.get(
            item, rx.empty()
        )

    result = scheduler.start(lambda: rx.just("root").pipe(expand(project)))

    assert result.messages == [
        on_next(200, "root"),
        on_next(200, "slow"),
        on_next(200, "fail"),
        on_error(220, error),
    ]
    assert slow.subscriptions[0].unsubscribe == 220  # disposed with the failure


def test_disposing_disposes_every_projected_stream_and_projects_nothing_more() -> None:
    scheduler = TestScheduler()
    inner = scheduler.create_cold_observable(on_next(100, "next"), on_completed(110))
    projected: list[str] = []

    def project(item: str) -> Observable[str]:
        projected.append(item)
        return inner if item == "start" else rx.empty()

    result = scheduler.start(lambda: rx.just("start").pipe(expand(project)), disposed=250)

    assert result.messages == [on_next(200, "start")]
    assert inner.subscriptions[0].unsubscribe == 250
    assert projected == ["start"]


def test_a_long_synchronous_chain_does_not_deepen_the_stack() -> None:
    depth = sys.getrecursionlimit() * 3
    seen: list[int] = []
    rx.just(0).pipe(expand(lambda n: rx.just(n + 1) if n < depth else rx.empty())).subscribe(
        seen.append
    )
    assert seen == list(range(depth + 1))


def test_project_is_never_called_by_two_threads_at_once() -> None:
    inside = [0]
    overlaps = [0]
    done = threading.Event()

    def project(n: int) -> Observable[int]:
        inside[0] += 1
        if inside[0] > 1:
            overlaps[0] += 1
        try:
            if n >= 200:
                return rx.empty()
            # two children each, emitted from pool threads
            return rx.of(n * 2 + 1, n * 2 + 2).pipe(
                ops.subscribe_on(rx.scheduler.ThreadPoolScheduler(4))
            )
        finally:
            inside[0] -= 1

    seen: list[Any] = []
    rx.just(0).pipe(expand(project)).subscribe(seen.append, on_completed=done.set)
    assert done.wait(10)
    assert overlaps[0] == 0
    assert sorted(seen) == list(range(len(seen)))
