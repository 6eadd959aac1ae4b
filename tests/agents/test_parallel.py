"""ParallelAgent: concurrent branches, completion order, isolation, escalation, cancellation."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import InMemoryRunner, LlmAgent, ParallelAgent, SequentialAgent
from adk_rx.errors import InvalidAgentError
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.agents.scripted_agents import (
    BlockingAgent,
    EndlessAgent,
    GatedAgent,
    ScriptedAgent,
    TimedAgent,
    invocation_context,
    request_text,
    texts,
)

WAIT = 10.0  # seconds; an upper bound for things that happen at once, never a pause


class Recorder:
    """Subscribes to a run and records what it delivers."""

    def __init__(self, agent: ParallelAgent, **ctx: Any) -> None:
        self.events: list[Event] = []
        self.errors: list[Exception] = []
        self.completed = threading.Event()
        self.subscription = agent.run_async(invocation_context(agent, **ctx)).subscribe(
            self.events.append, self._error, self.completed.set
        )

    def _error(self, error: Exception) -> None:
        self.errors.append(error)
        self.completed.set()


def _assert_stopped(branch: EndlessAgent) -> None:
    """The branch was told to stop, its loop exited and its thread ended."""
    assert branch.disposed.is_set(), f"{branch.name} was not disposed"
    assert branch.stopped.wait(WAIT), f"{branch.name} kept producing"
    for thread in branch.threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    assert branch.emitted - branch.emitted_at_dispose <= 1  # at most the one in flight


def _ms(milliseconds: int) -> timedelta:
    return timedelta(milliseconds=milliseconds)


def test_events_arrive_in_completion_order_each_in_its_branch() -> None:
    scheduler = TestScheduler()
    slow = TimedAgent(name="slow", delay=_ms(500), scheduler=scheduler)
    fast = TimedAgent(name="fast", delay=_ms(100), scheduler=scheduler)
    agent = ParallelAgent(name="par", sub_agents=[slow, fast], scheduler=scheduler)

    run = Recorder(agent)
    scheduler.advance_to(1.0)

    assert run.completed.is_set() and run.errors == []
    assert texts(run.events) == ["fast", "slow"]
    assert [(e.author, e.branch) for e in run.events] == [
        ("fast", "par.fast"),
        ("slow", "par.slow"),
    ]


def test_branches_run_in_virtual_time_on_an_injected_scheduler() -> None:
    scheduler = TestScheduler()
    branch = TimedAgent(name="late", delay=_ms(1000), scheduler=scheduler)
    agent = ParallelAgent(name="par", sub_agents=[branch], scheduler=scheduler)

    run = Recorder(agent)
    scheduler.advance_to(0.9)
    assert run.events == [] and not run.completed.is_set()

    scheduler.advance_to(1.1)
    assert texts(run.events) == ["late"]
    assert run.completed.is_set() and run.errors == []


def test_an_escalation_ends_the_agent_and_cancels_the_other_branches() -> None:
    scheduler = TestScheduler()
    fast = TimedAgent(name="fast", delay=_ms(50), scheduler=scheduler)
    escalating = TimedAgent(name="esc", delay=_ms(100), scheduler=scheduler, text="!escalate")
    slow = TimedAgent(name="slow", delay=_ms(500), scheduler=scheduler)
    agent = ParallelAgent(name="par", sub_agents=[fast, escalating, slow], scheduler=scheduler)

    run = Recorder(agent)
    scheduler.advance_to(0.05)
    assert texts(run.events) == ["fast"]
    assert not run.completed.is_set()

    scheduler.advance_to(0.1)
    assert texts(run.events) == ["fast", "escalate"]
    assert run.events[-1].actions.escalate is True
    assert run.completed.is_set()

    scheduler.advance_to(1.0)
    assert texts(run.events) == ["fast", "escalate"]
    assert slow.fired == []  # its timer was disposed, not merely ignored


def test_an_escalation_disposes_a_branch_running_on_another_thread() -> None:
    endless = EndlessAgent(name="endless")
    escalating = GatedAgent(name="esc", gate=endless.started, text="!stop")
    agent = ParallelAgent(name="par", sub_agents=[endless, escalating])

    run = Recorder(agent)

    assert run.completed.wait(WAIT) and run.errors == []
    assert run.events[-1].actions.escalate is True
    _assert_stopped(endless)


def test_an_error_in_one_branch_errors_the_agent_and_disposes_the_others() -> None:
    endless = EndlessAgent(name="endless")
    failing = GatedAgent(name="failing", gate=endless.started, error=ValueError("boom"))
    agent = ParallelAgent(name="par", sub_agents=[endless, failing])

    run = Recorder(agent)

    assert run.completed.wait(WAIT)
    assert [type(e) for e in run.errors] == [ValueError]
    _assert_stopped(endless)


def test_two_branches_that_each_block_one_second_finish_in_about_one_second() -> None:
    agent = ParallelAgent(
        name="par",
        sub_agents=[BlockingAgent(name="a", seconds=1.0), BlockingAgent(name="b", seconds=1.0)],
    )

    started = time.monotonic()
    events = agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run()
    elapsed = time.monotonic() - started

    assert sorted(texts(events)) == ["a", "b"]
    assert 1.0 <= elapsed < 1.5, f"took {elapsed:.2f}s"


def test_disposing_a_run_through_a_runner_stops_every_branch() -> None:
    first, second = EndlessAgent(name="first"), EndlessAgent(name="second")
    runner = InMemoryRunner(agent=ParallelAgent(name="par", sub_agents=[first, second]))
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()
    received: list[Event] = []

    subscription = runner.run_async(user_id="u", session_id=session.id, new_message="go").subscribe(
        received.append
    )
    assert first.started.wait(WAIT) and second.started.wait(WAIT)
    subscription.dispose()
    delivered_at_dispose = len(received)

    _assert_stopped(first)
    _assert_stopped(second)
    assert len(received) - delivered_at_dispose <= 1
    assert {e.branch for e in received} <= {"par.first", "par.second"}


def test_siblings_do_not_see_each_others_events_in_their_model_contents() -> None:
    left_llm = ScriptedLlm(["left answer 1", "left answer 2"])
    right_llm = ScriptedLlm(["right answer 1", "right answer 2"])
    agent = ParallelAgent(
        name="par",
        sub_agents=[
            LlmAgent(name="left", model=left_llm),
            LlmAgent(name="right", model=right_llm),
        ],
    )
    runner = InMemoryRunner(agent=agent)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    turn1 = list(runner.run(user_id="u", session_id=session.id, new_message="question 1"))
    turn2 = list(runner.run(user_id="u", session_id=session.id, new_message="question 2"))

    assert sorted(simplify_events(turn1)) == ["left: left answer 1", "right: right answer 1"]
    assert sorted(simplify_events(turn2)) == ["left: left answer 2", "right: right answer 2"]
    left_seen, right_seen = request_text(left_llm, 1), request_text(right_llm, 1)
    assert "question 1" in left_seen and "question 2" in left_seen
    assert "left answer 1" in left_seen and "right answer" not in left_seen
    assert "right answer 1" in right_seen and "left answer" not in right_seen


def test_an_agent_after_the_parallel_one_sees_every_branch() -> None:
    summary_llm = ScriptedLlm(["summary"])
    agent = SequentialAgent(
        name="seq",
        sub_agents=[
            ParallelAgent(
                name="par",
                sub_agents=[
                    LlmAgent(name="left", model=ScriptedLlm(["left answer"])),
                    LlmAgent(name="right", model=ScriptedLlm(["right answer"])),
                ],
            ),
            LlmAgent(name="summarizer", model=summary_llm),
        ],
    )
    runner = InMemoryRunner(agent=agent)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    events = list(runner.run(user_id="u", session_id=session.id, new_message="question"))

    assert [e.branch for e in events] == [events[0].branch, events[1].branch, None]
    assert {events[0].branch, events[1].branch} == {"par.left", "par.right"}
    seen = request_text(summary_llm, 0)
    assert "left answer" in seen and "right answer" in seen


def test_nested_parallel_agents_name_branches_by_path() -> None:
    scheduler = TestScheduler()
    inner = ParallelAgent(
        name="inner",
        sub_agents=[
            ScriptedAgent(name="a", runs=[["a"]]),
            ScriptedAgent(name="b", runs=[["b"]]),
        ],
        scheduler=scheduler,
    )
    outer = ParallelAgent(
        name="outer",
        sub_agents=[inner, ScriptedAgent(name="c", runs=[["c"]])],
        scheduler=scheduler,
    )

    run = Recorder(outer)
    scheduler.advance_to(1.0)

    assert run.completed.is_set() and run.errors == []
    assert sorted((e.author, e.branch) for e in run.events) == [
        ("a", "outer.inner.a"),
        ("b", "outer.inner.b"),
        ("c", "outer.c"),
    ]


def test_run_async_is_cold_and_each_subscription_runs_again() -> None:
    scheduler = TestScheduler()
    branch = ScriptedAgent(name="a", runs=[["x"]])
    agent = ParallelAgent(name="par", sub_agents=[branch], scheduler=scheduler)
    events = agent.run_async(invocation_context(agent))

    scheduler.advance_to(1.0)
    assert branch.contexts == []
    got: list[Event] = []
    events.subscribe(got.append)
    events.subscribe(got.append)
    scheduler.advance_to(2.0)
    assert texts(got) == ["x", "x"]
    assert len(branch.contexts) == 2


def test_a_blocked_subscriber_does_not_stall_another_subscription() -> None:
    # Each subscription merges its own branches (its own merge lock): the first subscriber
    # blocking inside on_next must not hold up the second subscription of the same Observable.
    agent = ParallelAgent(
        name="par",
        sub_agents=[ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="b", runs=[["y"]])],
    )
    events = agent.run_async(invocation_context(agent))
    entered, release = threading.Event(), threading.Event()
    first_done, second_done = threading.Event(), threading.Event()

    def block(_: Event) -> None:
        entered.set()
        release.wait(WAIT)

    events.subscribe(block, on_completed=first_done.set)
    try:
        assert entered.wait(WAIT)
        events.subscribe(on_completed=second_done.set)
        assert second_done.wait(WAIT)
        assert not first_done.is_set()
    finally:
        release.set()
    assert first_done.wait(WAIT)


def test_no_sub_agents_completes_without_events() -> None:
    agent = ParallelAgent(name="par")
    assert agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run() == []


def test_builder_and_keywords_build_the_same_agent() -> None:
    scheduler = TestScheduler()
    a1, b1 = ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="b", runs=[["y"]])
    a2, b2 = ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="b", runs=[["y"]])

    built = ParallelAgent.builder().name("p").sub_agents(a1, b1).scheduler(scheduler).build()
    direct = ParallelAgent(name="p", sub_agents=[a2, b2], scheduler=scheduler)

    for agent in (built, direct):
        assert isinstance(agent, ParallelAgent)
        assert agent.name == "p" and agent.scheduler is scheduler
        assert [sub.name for sub in agent.sub_agents] == ["a", "b"]
    assert ParallelAgent(name="p").scheduler is None
    with pytest.raises(AttributeError, match="immutable"):
        built.scheduler = None  # type: ignore[misc]


def test_a_sub_agent_cannot_get_a_second_parent() -> None:
    shared = ScriptedAgent(name="shared", runs=[["x"]])
    ParallelAgent(name="one", sub_agents=[shared])
    with pytest.raises(InvalidAgentError, match="already has parent"):
        ParallelAgent(name="two", sub_agents=[shared])
