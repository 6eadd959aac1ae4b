"""Disposing a workflow's run: every running node is cancelled, no node starts after it."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from reactivex import Observable
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.events import Event
from adk_rx.workflow import START, JoinNode, RetryConfig, Workflow, node
from tests.workflow.support import runner_for, start

pytestmark = pytest.mark.timeout(30)


def test_disposing_mid_graph_disposes_every_running_node_at_once_in_virtual_time() -> None:
    clock = TestScheduler()
    works = {
        name: clock.create_cold_observable(ReactiveTest.on_next(100.0, f"{name} done"))
        for name in ("a", "b", "c")
    }
    started: list[str] = []

    def make(name: str) -> Any:
        def work(node_input: Any) -> Observable[str]:
            started.append(name)
            return works[name]

        work.__name__ = name
        return work

    def after(node_input: Any) -> str:
        started.append("after")
        return "never"

    workflow = Workflow(
        name="wf",
        edges=[(START, (make("a"), make("b"), make("c")), JoinNode(name="join"), after)],
    )
    subscription = start(runner_for(workflow, clock)).subscribe(lambda _: None)
    clock.advance_to(40.0)
    subscription.dispose()
    clock.advance_to(500.0)

    assert started == ["a", "b", "c"]  # the join and its successor never started
    assert [w.subscriptions[0].unsubscribe for w in works.values()] == [40.0, 40.0, 40.0]


def test_a_retry_waiting_on_its_delay_never_starts_after_the_dispose() -> None:
    clock = TestScheduler()
    attempts: list[float] = []

    def flaky(node_input: Any) -> str:
        attempts.append(clock.clock)
        raise ConnectionError("down")

    config = RetryConfig(max_attempts=5, initial_delay=10.0, jitter=0.0)
    workflow = Workflow(name="wf", edges=[(START, node(flaky, retry_config=config))])
    subscription = start(runner_for(workflow, clock)).subscribe(lambda _: None)
    clock.advance_to(5.0)
    subscription.dispose()
    clock.advance_to(1000.0)

    assert attempts == [0.0]


def test_disposing_cancels_every_running_async_node_within_100_ms_and_starts_none() -> None:
    started: list[str] = []
    cancelled_at: dict[str, float] = {}
    all_running = threading.Event()
    all_cancelled = threading.Event()
    lock = threading.Lock()

    def make(name: str, seconds: float) -> Any:
        async def work(node_input: Any) -> str:
            with lock:
                started.append(name)
                if len(started) == 4:
                    all_running.set()
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                with lock:
                    cancelled_at[name] = time.monotonic()
                    if len(cancelled_at) == 4:
                        all_cancelled.set()
                raise
            return name

        work.__name__ = name
        return work

    def after(node_input: Any) -> str:
        started.append("after")
        return "never"

    branches = tuple(make(f"n{i}", 30.0) for i in range(4))
    workflow = Workflow(name="wf", edges=[(START, branches, JoinNode(name="join"), after)])
    events: list[Event] = []
    subscription = start(runner_for(workflow)).subscribe(events.append)
    assert all_running.wait(10)

    disposed_at = time.monotonic()
    subscription.dispose()

    assert all_cancelled.wait(5)  # on the runtime loop's thread
    assert sorted(cancelled_at) == ["n0", "n1", "n2", "n3"]
    assert max(cancelled_at.values()) - disposed_at < 0.1
    assert "after" not in started and len(started) == 4
    assert all(e.output is None for e in events)
