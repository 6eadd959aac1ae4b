"""Retries and timeouts of workflow nodes, in virtual time: delays and deadlines wait on the
Runner's timer scheduler, so a TestScheduler drives them and nothing sleeps."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.errors import NodeTimeoutError
from adk_rx.events import Event
from adk_rx.workflow import START, RetryConfig, Workflow, node
from adk_rx.workflow.retry import retry_delay, should_retry
from tests.workflow.support import outputs, runner_for, start

pytestmark = pytest.mark.timeout(30)


def _collect(
    clock: TestScheduler, workflow: Workflow, until: float
) -> tuple[list[Event], list[Any]]:
    events: list[Event] = []
    errors: list[Any] = []
    start(runner_for(workflow, clock)).subscribe(events.append, errors.append)
    clock.advance_to(until)
    return events, errors


def test_a_failed_node_is_tried_again_after_exponential_delays_on_the_timer() -> None:
    clock = TestScheduler()
    attempts: list[float] = []

    def flaky(node_input: Any) -> str:
        attempts.append(clock.clock)
        if len(attempts) < 3:
            raise ConnectionError(f"attempt {len(attempts)}")
        return "ok"

    config = RetryConfig(max_attempts=3, initial_delay=1.0, backoff_factor=2.0, jitter=0.0)
    workflow = Workflow(name="wf", edges=[(START, node(flaky, retry_config=config))])

    events, errors = _collect(clock, workflow, 10.0)

    assert attempts == [0.0, 1.0, 3.0]  # 1 s, then 2 s, in virtual time
    assert [e.error_code for e in events if e.error_code] == ["ConnectionError"] * 2
    assert outputs(events) == [("wf@1/flaky@1", "ok")]
    assert errors == []


def test_only_the_listed_exceptions_are_retried() -> None:
    clock = TestScheduler()
    calls: list[float] = []

    def broken(node_input: Any) -> str:
        calls.append(clock.clock)
        raise KeyError("no")

    config = RetryConfig(max_attempts=5, initial_delay=1.0, exceptions=[ConnectionError])
    workflow = Workflow(name="wf", edges=[(START, node(broken, retry_config=config))])

    events, errors = _collect(clock, workflow, 60.0)

    assert calls == [0.0]
    assert [type(e) for e in errors] == [KeyError]
    assert [e.error_code for e in events] == ["KeyError"]


def test_a_node_past_its_timeout_is_cancelled_and_fails_at_the_deadline() -> None:
    clock = TestScheduler()
    work = clock.create_cold_observable(ReactiveTest.on_next(50.0, "late"))

    def slow(node_input: Any) -> Observable[str]:
        return work

    workflow = Workflow(name="wf", edges=[(START, node(slow, timeout=5.0))])

    events, errors = _collect(clock, workflow, 100.0)

    assert [type(e) for e in errors] == [NodeTimeoutError]
    assert errors[0].node_name == "slow" and errors[0].timeout == 5.0
    assert work.subscriptions[0].unsubscribe == 5.0  # the node's work was disposed then
    assert [e.error_code for e in events] == ["NodeTimeoutError"]
    assert events[0].error_message == "Node 'slow' timed out after 5.0 seconds."


def test_the_timeout_covers_the_whole_run_not_each_item() -> None:
    clock = TestScheduler()
    ticks = clock.create_cold_observable(
        *(ReactiveTest.on_next(float(t), Event(content=None)) for t in range(1, 10))
    )

    def chatty(node_input: Any) -> Observable[Any]:
        return ticks

    workflow = Workflow(name="wf", edges=[(START, node(chatty, timeout=4.0))])

    _, errors = _collect(clock, workflow, 20.0)

    assert [type(e) for e in errors] == [NodeTimeoutError]
    assert ticks.subscriptions[0].unsubscribe == 4.0  # items every 1 s never reset it


def test_a_timed_out_node_is_retried_with_a_fresh_deadline() -> None:
    clock = TestScheduler()
    starts: list[float] = []

    def sometimes_slow(node_input: Any) -> Observable[str]:
        starts.append(clock.clock)
        if len(starts) == 1:
            return rx.never()
        return rx.timer(1.0, scheduler=clock).pipe(rx.operators.map(lambda _: "fast"))

    config = RetryConfig(max_attempts=2, initial_delay=0.5, jitter=0.0)
    workflow = Workflow(
        name="wf", edges=[(START, node(sometimes_slow, timeout=2.0, retry_config=config))]
    )

    events, errors = _collect(clock, workflow, 20.0)

    assert starts == [0.0, 2.5]
    assert outputs(events) == [("wf@1/sometimes_slow@1", "fast")]
    assert errors == []


def test_retry_rules_match_google_adk() -> None:
    config = RetryConfig(max_attempts=3, initial_delay=1.0, max_delay=3.0, jitter=0.0)
    assert [retry_delay(config, n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 3.0]
    assert should_retry(ValueError(), config, 2) and not should_retry(ValueError(), config, 3)
    assert not should_retry(ValueError(), None, 1)
    assert should_retry(ValueError(), RetryConfig(), 4) and not should_retry(
        ValueError(), RetryConfig(), 5
    )  # five attempts by default
    jittered = RetryConfig(initial_delay=10.0, max_delay=60.0)
    assert all(0.0 <= retry_delay(jittered, 1) <= 20.0 for _ in range(50))
