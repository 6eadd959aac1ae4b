"""with_sink: a stream with its side-channel reports emitted in between, none after the end."""

from __future__ import annotations

from collections.abc import Callable

import reactivex as rx
from reactivex import Observable
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx import with_sink

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def reporting(
    scheduler: TestScheduler, reports: dict[float, str], stream: Observable[str]
) -> Callable[[Callable[[str], None]], Observable[str]]:
    """A build function whose work sends ``reports`` to the sink at virtual times."""

    def build(sink: Callable[[str], None]) -> Observable[str]:
        for at, report in reports.items():
            scheduler.schedule_absolute(at, lambda *_, r=report: sink(r))
        return stream

    return build


def test_reports_are_emitted_between_the_items_of_the_stream() -> None:
    scheduler = TestScheduler()
    stream = scheduler.create_cold_observable(on_next(10, "a"), on_next(40, "b"), on_completed(50))
    build = reporting(scheduler, {220.0: "p1", 230.0: "p2"}, stream)
    result = scheduler.start(lambda: with_sink(build))
    assert result.messages == [
        on_next(210, "a"),
        on_next(220, "p1"),
        on_next(230, "p2"),
        on_next(240, "b"),
        on_completed(250),
    ]


def test_a_report_after_completion_is_dropped() -> None:
    scheduler = TestScheduler()
    stream = scheduler.create_cold_observable(on_next(10, "a"), on_completed(20))
    build = reporting(scheduler, {230.0: "late"}, stream)
    result = scheduler.start(lambda: with_sink(build))
    assert result.messages == [on_next(210, "a"), on_completed(220)]


def test_a_report_after_an_error_is_dropped() -> None:
    scheduler = TestScheduler()
    error = RuntimeError("tool failed")
    stream = scheduler.create_cold_observable(on_error(20, error))
    build = reporting(scheduler, {215.0: "p", 230.0: "late"}, stream)
    result = scheduler.start(lambda: with_sink(build))
    assert result.messages == [on_next(215, "p"), on_error(220, error)]


def test_a_report_after_disposal_is_dropped_and_the_stream_is_disposed() -> None:
    scheduler = TestScheduler()
    stream = scheduler.create_cold_observable(on_next(400, "never"))
    build = reporting(scheduler, {300.0: "p", 700.0: "late"}, stream)
    result = scheduler.start(lambda: with_sink(build), disposed=500)
    assert result.messages == [on_next(300, "p")]
    assert stream.subscriptions == [ReactiveTest.subscribe(200, 500)]


def test_a_report_sent_from_inside_on_next_is_delivered_after_that_item() -> None:
    got: list[str] = []

    def build(sink: Callable[[str], None]) -> Observable[str]:
        def subscribe(observer, scheduler=None):  # type: ignore[no-untyped-def]
            observer.on_next("a")
            sink("p")
            observer.on_completed()

        return rx.create(subscribe)

    with_sink(build).subscribe(got.append, on_completed=lambda: got.append("|"))
    assert got == ["a", "p", "|"]
