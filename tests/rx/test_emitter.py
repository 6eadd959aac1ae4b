"""from_emitter: pushes delivered one at a time in order; followed sources owned by the stream."""

from __future__ import annotations

from typing import Any

import reactivex as rx
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx import Emitter, from_emitter

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)
subscribe = ReactiveTest.subscribe


def test_followed_sources_feed_the_stream_until_it_completes() -> None:
    scheduler = TestScheduler()
    a = scheduler.create_cold_observable(on_next(10, "1"), on_next(40, "2"), on_completed(50))
    b = scheduler.create_cold_observable(on_next(20, "x"), on_next(60, "y"), on_completed(70))

    def start(out: Emitter[str]) -> None:
        out.follow(a, out.push)
        out.follow(b, out.push, out.complete)

    result = scheduler.start(lambda: from_emitter(start))
    assert result.messages == [
        on_next(210, "1"),
        on_next(220, "x"),
        on_next(240, "2"),
        on_next(260, "y"),
        on_completed(270),
    ]


def test_a_source_error_fails_the_stream_and_disposes_the_other_sources_then_teardowns() -> None:
    scheduler = TestScheduler()
    error = RuntimeError("connection lost")
    failing = scheduler.create_cold_observable(on_next(10, "t"), on_error(30, error))
    other = scheduler.create_cold_observable(on_next(100, "late"))
    torn_down: list[float] = []

    def start(out: Emitter[str]) -> None:
        out.on_dispose(lambda: torn_down.append(scheduler.clock))
        out.follow(failing, out.push)
        out.follow(other, out.push)

    result = scheduler.start(lambda: from_emitter(start))
    assert result.messages == [on_next(210, "t"), on_error(230, error)]
    assert other.subscriptions == [subscribe(200, 230)]
    assert torn_down == [230.0]


def test_disposing_the_subscription_disposes_every_source_and_runs_teardowns_once() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(500, "never"))
    torn_down: list[str] = []
    emitters: list[Emitter[str]] = []

    def start(out: Emitter[str]) -> None:
        emitters.append(out)
        out.on_dispose(lambda: torn_down.append("closed"))
        out.follow(source, out.push)

    result = scheduler.start(lambda: from_emitter(start), disposed=300)
    emitters[0].dispose()
    assert result.messages == []
    assert source.subscriptions == [subscribe(200, 300)]
    assert torn_down == ["closed"]
    assert emitters[0].is_stopped


def test_a_completed_source_is_released_and_its_handle_may_still_be_disposed() -> None:
    scheduler = TestScheduler()
    done: list[str] = []
    handles: list[Any] = []
    source = scheduler.create_cold_observable(on_next(10, "a"), on_completed(20))

    def start(out: Emitter[str]) -> None:
        handles.append(out.follow(source, out.push, lambda: done.append("done")))

    result = scheduler.start(lambda: from_emitter(start))
    handles[0].dispose()
    assert result.messages == [on_next(210, "a")]
    assert done == ["done"]
    assert source.subscriptions == [subscribe(200, 220)]


def test_disposing_a_handle_stops_that_source_only() -> None:
    scheduler = TestScheduler()
    first = scheduler.create_cold_observable(on_next(50, "a"), on_next(150, "b"))
    second = scheduler.create_cold_observable(on_next(150, "c"))

    def start(out: Emitter[str]) -> None:
        handle = out.follow(first, out.push)
        out.follow(second, out.push)
        scheduler.schedule_absolute(300, lambda *_: handle.dispose())

    result = scheduler.start(lambda: from_emitter(start))
    assert result.messages == [on_next(250, "a"), on_next(350, "c")]
    assert first.subscriptions == [subscribe(200, 300)]


def test_items_pushed_while_delivery_is_busy_wait_and_purge_drops_the_chosen_ones() -> None:
    got: list[str] = []
    emitters: list[Emitter[str]] = []

    def on_item(item: str) -> None:
        got.append(item)
        if item == "p1":  # delivery is busy: these wait in the queue
            out = emitters[0]
            for later in ("p2", "!", "p3"):
                out.push(later)
            assert out.purge(lambda waiting: waiting.startswith("p")) == 2
            out.push("i")

    def start(out: Emitter[str]) -> None:
        emitters.append(out)
        out.push("p1")
        out.complete()

    from_emitter(start).subscribe(on_item, on_completed=lambda: got.append("|"))
    assert got == ["p1", "!", "i", "|"]


def test_a_failure_comes_after_what_was_pushed_before_and_nothing_is_pushed_after() -> None:
    got: list[Any] = []
    error = ValueError("bad frame")

    def start(out: Emitter[str]) -> None:
        out.push("a")
        out.fail(error)
        out.push("b")
        out.complete()
        assert out.follow(rx.of("c"), out.push) is not None

    from_emitter(start).subscribe(got.append, got.append, lambda: got.append("|"))
    assert got == ["a", error]


def test_an_exception_in_start_fails_the_stream() -> None:
    errors: list[Exception] = []
    error = KeyError("agent")

    def start(out: Emitter[str]) -> None:
        raise error

    from_emitter(start).subscribe(on_error=errors.append)
    assert errors == [error]
