"""repeat_steps: a fresh step after each completion, until the rule says it is over."""

from __future__ import annotations

import sys

import reactivex as rx
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx.repeat_steps import repeat_steps
from adk_rx.rx.sync import items

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_steps_run_one_after_another_on_virtual_time_until_the_last_item_says_stop() -> None:
    # step() #1:      --a--b|            (at 210, 220; completes 230)
    # step() #2:               --c|      (relative 10 -> 240; completes 250)
    # repeat_steps:   --a--b----c|
    scheduler = TestScheduler()
    steps = [
        scheduler.create_cold_observable(on_next(10, "a"), on_next(20, "b"), on_completed(30)),
        scheduler.create_cold_observable(on_next(10, "c"), on_completed(20)),
    ]
    built: list[int] = []

    def step() -> rx.Observable[str]:
        built.append(scheduler.clock)
        return steps[len(built) - 1]

    result = scheduler.start(lambda: repeat_steps(step, lambda last, n: last == "c"))
    assert result.messages == [
        on_next(210, "a"),
        on_next(220, "b"),
        on_next(240, "c"),
        on_completed(250),
    ]
    assert built == [200, 230]  # the second step is built only when the first completed


def test_the_rule_sees_the_step_count_and_none_for_a_step_without_items() -> None:
    seen: list[tuple[object, int]] = []

    def is_over(last: object, taken: int) -> bool:
        seen.append((last, taken))
        return taken == 3

    got: list[object] = []
    counter = iter(range(10))
    repeat_steps(lambda: items([next(counter)] if len(seen) != 1 else []), is_over).subscribe(
        got.append, on_completed=lambda: got.append("|")
    )
    assert got == [0, 1, "|"]
    assert seen == [(0, 1), (None, 2), (1, 3)]


def test_an_error_ends_the_loop_and_no_further_step_is_built() -> None:
    built: list[int] = []

    def step() -> rx.Observable[int]:
        built.append(1)
        return rx.throw(ValueError("step failed"))

    errors: list[Exception] = []
    repeat_steps(step, lambda last, n: False).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["step failed"]
    assert built == [1]


def test_disposing_stops_the_loop_between_steps() -> None:
    scheduler = TestScheduler()
    built: list[int] = []

    def step() -> rx.Observable[str]:
        built.append(1)
        return scheduler.create_cold_observable(on_next(10, "x"), on_completed(20))

    result = scheduler.start(
        lambda: repeat_steps(step, lambda last, n: False), created=100, subscribed=200, disposed=245
    )
    assert result.messages == [on_next(210, "x"), on_next(230, "x")]
    assert len(built) == 3  # the third step started at 240 and was disposed before its item


def test_a_long_synchronous_run_does_not_grow_the_stack() -> None:
    steps = sys.getrecursionlimit() * 2
    got: list[int] = []
    repeat_steps(lambda: items([len(got)]), lambda last, n: n >= steps).subscribe(got.append)
    assert len(got) == steps
