"""watched: the watcher sees each item, then exactly one end, before the subscriber does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reactivex as rx
from reactivex import Observable
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx import Outcome, Watcher, watched

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)
R = TypeVar("R")


class Recorder(Watcher[str]):
    """Writes down what it is told, and whether it was inside ``subscribing`` then."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.inside = False

    def subscribing(self, subscribe: Callable[[], R]) -> R:
        self.inside = True
        try:
            return subscribe()
        finally:
            self.inside = False

    def item(self, value: str) -> None:
        self.log.append(("item", value))

    def ended(self, outcome: Outcome, error: Exception | None) -> None:
        self.log.append(("ended", outcome, error))


def test_a_completed_stream_tells_its_items_then_completed() -> None:
    scheduler = TestScheduler()
    log: list[Any] = []
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(20, "b"), on_completed(30))
    result = scheduler.start(lambda: watched(lambda: source, lambda: Recorder(log)))
    assert result.messages == [on_next(210, "a"), on_next(220, "b"), on_completed(230)]
    assert log == [("item", "a"), ("item", "b"), ("ended", Outcome.COMPLETED, None)]


def test_a_failed_stream_tells_failed_with_the_error() -> None:
    scheduler = TestScheduler()
    log: list[Any] = []
    error = RuntimeError("model down")
    source = scheduler.create_cold_observable(on_next(10, "a"), on_error(20, error))
    result = scheduler.start(lambda: watched(lambda: source, lambda: Recorder(log)))
    assert result.messages == [on_next(210, "a"), on_error(220, error)]
    assert log == [("item", "a"), ("ended", Outcome.FAILED, error)]


def test_a_disposal_tells_disposed_drops_later_items_and_disposes_the_source() -> None:
    scheduler = TestScheduler()
    log: list[Any] = []
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(400, "late"))
    result = scheduler.start(lambda: watched(lambda: source, lambda: Recorder(log)), disposed=300)
    assert result.messages == [on_next(210, "a")]
    assert log == [("item", "a"), ("ended", Outcome.DISPOSED, None)]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 300)]


def test_the_watcher_hears_of_the_end_before_the_subscriber() -> None:
    log: list[Any] = []
    watched(lambda: rx.of("a"), lambda: Recorder(log)).subscribe(
        on_completed=lambda: log.append("subscriber: completed")
    )
    assert log[-2:] == [("ended", Outcome.COMPLETED, None), "subscriber: completed"]


def test_the_source_is_built_and_subscribed_inside_subscribing() -> None:
    watchers: list[Recorder] = []
    seen: list[bool] = []

    def build() -> Observable[str]:
        seen.append(watchers[0].inside)
        return rx.empty()

    def new_watcher() -> Recorder:
        watchers.append(Recorder([]))
        return watchers[0]

    watched(build, new_watcher).subscribe()
    assert seen == [True]


def test_a_build_that_raises_fails_the_stream() -> None:
    log: list[Any] = []
    errors: list[Exception] = []
    error = ValueError("no request")

    def build() -> Observable[str]:
        raise error

    watched(build, lambda: Recorder(log)).subscribe(on_error=errors.append)
    assert errors == [error]
    assert log == [("ended", Outcome.FAILED, error)]


def test_each_subscription_gets_its_own_watcher() -> None:
    logs: list[list[Any]] = []

    def new_watcher() -> Recorder:
        logs.append([])
        return Recorder(logs[-1])

    stream = watched(lambda: rx.of("a"), new_watcher)
    stream.subscribe()
    stream.subscribe()
    assert logs == [[("item", "a"), ("ended", Outcome.COMPLETED, None)]] * 2


def test_an_end_after_an_end_is_not_told_twice() -> None:
    log: list[Any] = []

    def source(observer: Any, scheduler: Any = None) -> None:
        observer.on_completed()
        observer.on_error(RuntimeError("late"))
        observer.on_next("late")

    watched(lambda: rx.create(source), lambda: Recorder(log)).subscribe(on_error=lambda _: None)
    assert log == [("ended", Outcome.COMPLETED, None)]
