"""first_or_recover: the first item mapped, or the recovery's items when something fails."""

from __future__ import annotations

import reactivex as rx
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx._engine.first_or_recover import first_or_recover
from adk_rx.rx._engine.sync import just

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def _never_recover(exc: Exception) -> rx.Observable[str]:
    raise AssertionError(f"no recovery expected, got {exc!r}")


def test_the_first_item_is_mapped_and_the_source_released_at_once() -> None:
    # source:              --a--b--|
    # first_or_recover:    --A|
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(20, "b"), on_completed(30))
    result = scheduler.start(
        lambda: first_or_recover(lambda: source, lambda v: str(v).upper(), _never_recover)
    )
    assert result.messages == [on_next(210, "A"), on_completed(210)]
    assert source.subscriptions == [ReactiveTest.subscribe(200, 210)]


def test_an_empty_source_maps_none() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_completed(10))
    result = scheduler.start(
        lambda: first_or_recover(lambda: source, lambda v: f"got {v}", _never_recover)
    )
    assert result.messages == [on_next(210, "got None"), on_completed(210)]


def test_a_failing_source_continues_with_the_recovery() -> None:
    # source:              --#e
    # recover(e):            --r|
    # first_or_recover:    ----r|
    scheduler = TestScheduler()
    error = ValueError("e")
    source = scheduler.create_cold_observable(on_error(10, error))
    fallback = scheduler.create_cold_observable(on_next(5, "r"), on_completed(6))
    recovered: list[Exception] = []

    def recover(exc: Exception) -> rx.Observable[str]:
        recovered.append(exc)
        return fallback

    result = scheduler.start(lambda: first_or_recover(lambda: source, str, recover))
    assert result.messages == [on_next(215, "r"), on_completed(216)]
    assert recovered == [error]


def test_a_mapper_or_a_source_builder_that_raises_recovers_the_same_way() -> None:
    def boom(_: object) -> str:
        raise KeyError("map")

    def no_source() -> rx.Observable[str]:
        raise KeyError("build")

    got: list[object] = []
    for source, mapper in ((lambda: just("x"), boom), (no_source, str)):
        first_or_recover(source, mapper, lambda exc: just(f"recovered {exc}")).subscribe(got.append)
    assert got == ["recovered 'map'", "recovered 'build'"]


def test_a_recovery_may_pass_the_error_on() -> None:
    errors: list[Exception] = []
    first_or_recover(
        lambda: rx.throw(RuntimeError("stop")), str, lambda exc: rx.throw(exc)
    ).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["stop"]


def test_disposing_before_the_first_item_disposes_the_source() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(100, "late"), on_completed(110))
    result = scheduler.start(
        lambda: first_or_recover(lambda: source, str, _never_recover), disposed=250
    )
    assert result.messages == []
    assert source.subscriptions == [ReactiveTest.subscribe(200, 250)]
