"""retry_decided: a fresh attempt after an error, when and if the decision says so."""

from __future__ import annotations

import reactivex as rx
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx._engine.retry_decided import Retry, retry_decided

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_a_failed_attempt_is_retried_after_the_decided_delay_in_virtual_time() -> None:
    # attempt() #1:    --#e1                       (fails at 210)
    # decide(e1) = Retry(delay=3)
    # attempt() #2:          --a--b|              (subscribed at 213)
    # retry_decided:   ----------a--b|
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(on_error(10, ValueError("e1")))
    second = scheduler.create_cold_observable(on_next(10, "a"), on_next(20, "b"), on_completed(30))
    attempts = iter([first, second])
    scheduled: list[int] = []

    def decide(error: Exception) -> Retry:
        return Retry(3, lambda: scheduled.append(scheduler.clock))

    result = scheduler.start(lambda: retry_decided(lambda: next(attempts), decide, scheduler))
    assert result.messages == [on_next(223, "a"), on_next(233, "b"), on_completed(243)]
    assert second.subscriptions == [ReactiveTest.subscribe(213, 243)]
    assert scheduled == [210]  # told once the timer exists, before it fires


def test_an_error_after_an_item_is_never_retried() -> None:
    scheduler = TestScheduler()
    error = ValueError("late")
    source = scheduler.create_cold_observable(on_next(10, "a"), on_error(20, error))
    asked: list[Exception] = []

    def decide(exc: Exception) -> Retry:
        asked.append(exc)
        return Retry(0)

    result = scheduler.start(lambda: retry_decided(lambda: source, decide, scheduler))
    assert result.messages == [on_next(210, "a"), on_error(220, error)]
    assert asked == []


def test_the_decision_may_give_up_with_the_error_or_with_another_one() -> None:
    original = ValueError("original")
    replaced = RuntimeError("gave up")
    got: list[Exception] = []
    for decision in (None, replaced):
        retry_decided(
            lambda: rx.throw(original), lambda _, d=decision: d, TestScheduler()
        ).subscribe(on_error=got.append)
    assert got == [original, replaced]


def test_a_zero_delay_retries_at_once_and_an_attempt_that_raises_counts_as_failed() -> None:
    calls: list[int] = []

    def attempt() -> rx.Observable[str]:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("not yet")
        return rx.just("ok")

    got: list[object] = []
    retry_decided(attempt, lambda _: Retry(0), TestScheduler()).subscribe(
        got.append, on_completed=lambda: got.append("|")
    )
    assert got == ["ok", "|"]
    assert len(calls) == 3


def test_disposing_during_the_wait_cancels_the_next_attempt() -> None:
    scheduler = TestScheduler()
    built: list[int] = []

    def attempt() -> rx.Observable[str]:
        built.append(scheduler.clock)
        return scheduler.create_cold_observable(on_error(10, ValueError("e")))

    result = scheduler.start(
        lambda: retry_decided(attempt, lambda _: Retry(100), scheduler), disposed=250
    )
    assert result.messages == []
    assert built == [200]
