"""StageChain: stages subscribed one after another, with an Enum life cycle."""

from __future__ import annotations

import reactivex as rx
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.rx._engine.sync import just

on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed


class _Owner:
    """A chain's owner that keeps what it is told."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def chain_failed(self, error: Exception) -> None:
        self.failures.append(str(error))


def test_each_stage_is_built_from_the_last_item_of_the_one_before() -> None:
    # stage 1:   --s|   then(s) -> stage 2: --m|   then(m) -> stage 3: --e1--e2|
    scheduler = TestScheduler()
    chain = StageChain(_Owner())
    emitted: list[tuple[int, str]] = []
    trail: list[tuple[str, object]] = []

    def stage(*items: str) -> rx.Observable[str]:
        msgs = [on_next(10 * (i + 1), v) for i, v in enumerate(items)]
        return scheduler.create_cold_observable(*msgs, on_completed(10 * (len(items) + 1)))

    def third(m: object) -> None:
        trail.append(("third", m))
        chain.step(
            lambda: stage("e1", "e2"),
            lambda _: trail.append(("done", chain.finish())),
            lambda e: emitted.append((scheduler.clock, e)),
        )

    def second(s: object) -> None:
        trail.append(("second", s))
        chain.step(lambda: stage("m"), third)

    assert chain.state is RunState.WAITING
    assert chain.begin()
    chain.step(lambda: stage("s"), second)
    scheduler.start()
    assert trail == [("second", "s"), ("third", "m"), ("done", True)]
    assert emitted == [(50, "e1"), (60, "e2")]
    assert chain.state is RunState.DONE


def test_each_transition_happens_once() -> None:
    chain = StageChain(_Owner())
    assert chain.begin() and not chain.begin()
    assert chain.stop() and not chain.stop() and not chain.finish()
    assert chain.state is RunState.STOPPING
    chain.settle()
    assert chain.state is RunState.DONE


def test_a_chain_cancelled_while_waiting_never_begins() -> None:
    chain = StageChain(_Owner())
    assert chain.cancel_waiting() is RunState.WAITING
    assert not chain.begin()
    assert chain.cancel_waiting() is RunState.DONE


def test_a_failing_stage_or_then_goes_to_the_owner_and_stops_further_stages() -> None:
    owner = _Owner()
    failures = owner.failures
    chain = StageChain(owner)
    chain.begin()
    chain.step(lambda: rx.throw(ValueError("stage")), lambda _: failures.append("then"))

    def then(_: object) -> None:
        raise KeyError("then")

    chain.step(lambda: just(1), then)
    assert failures == ["stage", "'then'"]


def test_after_a_stop_no_stage_is_subscribed_and_late_items_are_dropped() -> None:
    scheduler = TestScheduler()
    chain = StageChain(_Owner())
    chain.begin()
    got: list[object] = []
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(30, "b"), on_completed(40))
    chain.step(lambda: source, lambda _: got.append("then"), got.append)
    scheduler.advance_to(20)
    assert chain.stop()
    chain.dispose()  # the stage running now
    scheduler.advance_to(100)
    built: list[int] = []
    chain.step(lambda: built.append(1) or just(1), lambda _: None)
    assert got == ["a"]
    assert built == []
