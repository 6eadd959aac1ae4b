"""Deadlines: RunConfig.timeout for the invocation, RunConfig.tool_timeout per call.

Time comes from the Runner's timer scheduler, so these tests run in virtual time on a
``TestScheduler``: nothing sleeps.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import InvocationTimeoutError, LlmAgent, RunConfig, StreamingMode
from adk_rx.events import Event
from adk_rx.runner.invocation import Invocation
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import (
    WAIT,
    ThreadCensus,
    call_response,
    in_memory_runner,
    new_session,
    stored,
    unanswered_calls,
    warm_pool,
)

pytestmark = pytest.mark.timeout(30)


class Probe:
    """An Observable that never emits and records its subscription and disposal."""

    def __init__(self) -> None:
        self.subscribed = 0
        self.disposed = threading.Event()

    def observable(self, *_: Any) -> Observable[Any]:
        def start(_: Any) -> Observable[Any]:
            self.subscribed += 1
            return rx.never().pipe(ops.finally_action(self.disposed.set))

        return rx.defer(start)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.errors: list[Exception] = []
        self.completed = False

    def subscribe(self, events: Observable[Event]) -> Any:
        return events.subscribe(self.events.append, self.errors.append, self._complete)

    def _complete(self) -> None:
        self.completed = True


def _timed_runner(script: list[Any], **agent: Any) -> tuple[Any, TestScheduler]:
    clock = TestScheduler()
    runner = in_memory_runner(
        LlmAgent(name="agent", model=ScriptedLlm(script), **agent), timer_scheduler=clock
    )
    new_session(runner)
    return runner, clock


def test_invocation_timeout_cancels_a_hung_model_call_in_virtual_time() -> None:
    model = Probe()
    runner, clock = _timed_runner([model.observable])
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1", session_id="s1", new_message="hi", run_config=RunConfig(timeout=10.0)
        )
    )

    clock.advance_to(9.0)
    assert model.subscribed == 1
    assert not model.disposed.is_set()
    assert recorder.events == [] and recorder.errors == []
    assert [e.author for e in stored(runner)] == ["user"]

    clock.advance_to(10.0)
    assert model.disposed.is_set()
    assert len(recorder.errors) == 1
    assert isinstance(recorder.errors[0], InvocationTimeoutError)
    assert "timeout=10.0" in str(recorder.errors[0])
    last = stored(runner)[-1]
    assert (last.author, last.error_code, last.turn_complete) == ("agent", "TIMEOUT", True)
    assert [e.error_code for e in recorder.events] == ["TIMEOUT"]


def test_invocation_timeout_during_a_tool_answers_the_open_call_and_the_next_turn_works() -> None:
    tool = Probe()

    def wait_for_it() -> Observable[dict[str, Any]]:
        """Waits for an answer that never comes."""
        return tool.observable()

    runner, clock = _timed_runner(
        [call_response("wait_for_it", {}, "c1"), "moving on"], tools=[wait_for_it]
    )
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1", session_id="s1", new_message="go", run_config=RunConfig(timeout=3.0)
        )
    )
    assert tool.subscribed == 1

    clock.advance_to(3.0)

    assert tool.disposed.is_set()
    assert isinstance(recorder.errors[0], InvocationTimeoutError)
    events = stored(runner)
    answers = [r.response for e in events for r in e.get_function_responses() if r.id == "c1"]
    assert answers == [{"error": "timeout"}]
    assert events[-1].error_code == "TIMEOUT"

    follow_up = list(runner.run(user_id="u1", session_id="s1", new_message="again"))
    assert [e.text() for e in follow_up] == ["moving on"]
    assert unanswered_calls(runner.agent.canonical_model.requests[-1]) == set()


def test_a_run_that_finishes_in_time_cancels_its_deadline() -> None:
    runner, clock = _timed_runner(["quick"])
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1", session_id="s1", new_message="hi", run_config=RunConfig(timeout=1.0)
        )
    )
    assert recorder.completed

    clock.advance_to(100.0)

    assert recorder.errors == []
    assert [e.error_code for e in stored(runner)] == [None, None]


def test_timeout_while_streaming_keeps_only_persisted_events() -> None:
    model = Probe()

    def stream(_: Any) -> Observable[Any]:
        return rx.from_iterable(
            [call_response("x", partial=True), call_response("y", partial=True)]
        ).pipe(ops.concat(model.observable()))

    runner, clock = _timed_runner([stream])
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1",
            session_id="s1",
            new_message="hi",
            run_config=RunConfig(timeout=2.0, streaming_mode=StreamingMode.SSE),
        )
    )
    assert [e.partial for e in recorder.events] == [True, True]

    clock.advance_to(2.0)

    events = stored(runner)
    assert [(e.author, e.error_code) for e in events] == [("user", None), ("agent", "TIMEOUT")]
    # partial calls were never executed, so nothing needed an answer
    assert all(not e.get_function_responses() for e in events)


def test_tool_timeout_gives_the_model_an_error_and_the_run_goes_on() -> None:
    tool = Probe()

    def hangs() -> Observable[dict[str, Any]]:
        """Never answers."""
        return tool.observable()

    runner, clock = _timed_runner(
        [call_response("hangs", {}, "c1"), "the tool timed out, sorry"], tools=[hangs]
    )
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1", session_id="s1", new_message="go", run_config=RunConfig(tool_timeout=5.0)
        )
    )
    clock.advance_to(4.5)
    assert not tool.disposed.is_set()
    assert len(recorder.events) == 1

    clock.advance_to(5.0)

    assert tool.disposed.is_set()
    assert recorder.completed and recorder.errors == []
    responses = [r.response for e in recorder.events for r in e.get_function_responses()]
    assert responses == [{"error": "tool 'hangs' timed out after 5 s"}]
    assert recorder.events[-1].text() == "the tool timed out, sorry"
    model = runner.agent.canonical_model
    assert len(model.requests) == 2
    assert unanswered_calls(model.requests[-1]) == set()


def test_tool_timeout_cancels_an_async_tool_task() -> None:
    started = threading.Event()
    cancelled = threading.Event()

    async def slow() -> str:
        """Takes forever."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    runner, clock = _timed_runner([call_response("slow", {}, "c1"), "ok"], tools=[slow])
    done = threading.Event()
    recorder = Recorder()
    recorder.subscribe(
        runner.run_async(
            user_id="u1", session_id="s1", new_message="go", run_config=RunConfig(tool_timeout=1.0)
        ).pipe(ops.finally_action(done.set))
    )
    assert started.wait(WAIT)

    clock.advance_to(1.0)

    assert cancelled.wait(WAIT)
    assert done.wait(WAIT)
    assert recorder.errors == []
    responses = [r.response for e in recorder.events for r in e.get_function_responses()]
    assert responses == [{"error": "tool 'slow' timed out after 1 s"}]
    assert recorder.events[-1].text() == "ok"


def test_a_tool_inside_its_timeout_answers_normally() -> None:
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    runner, clock = _timed_runner([call_response("add", {"a": 1, "b": 2}, "c1"), "3"], tools=[add])
    events = list(
        runner.run(
            user_id="u1", session_id="s1", new_message="1+2", run_config=RunConfig(tool_timeout=9.0)
        )
    )
    clock.advance_to(100.0)
    assert [r.response for e in events for r in e.get_function_responses()] == [{"result": 3}]
    assert events[-1].text() == "3"


def test_deadlines_on_the_default_timer_start_no_thread_per_timer() -> None:
    pool = warm_pool(2)
    alive: list[set[str]] = []

    def tick() -> str:
        """Notes which threads are alive while it runs, under both deadlines."""
        alive.append({t.name for t in threading.enumerate()})
        return "tick"

    llm = ScriptedLlm([call_response("tick", {}, "c1"), "done"] * 2)
    runner = in_memory_runner(LlmAgent(name="agent", model=llm, tools=[tick]), io_scheduler=pool)
    new_session(runner)
    config = RunConfig(timeout=30.0, tool_timeout=30.0)
    list(runner.run(user_id="u1", session_id="s1", new_message="warm up", run_config=config))
    census = ThreadCensus()

    runner.run_async(user_id="u1", session_id="s1", new_message="again", run_config=config).pipe(
        ops.to_list()
    ).run()

    baseline = {t.name for t in census.before}
    assert len(alive) == 2
    assert alive[1] <= baseline
    assert census.leftovers() == []
    pool.executor.shutdown()


def _live_invocations() -> int:
    gc.collect()
    return sum(isinstance(o, Invocation) for o in gc.get_objects())


def test_finished_runs_with_a_deadline_are_released_at_once() -> None:
    # A finished run's deadline is cancelled; nothing may keep the run until the deadline's
    # due time (the api-server's runs have a 300 s one).
    turns = 100
    runner = in_memory_runner(LlmAgent(name="agent", model=ScriptedLlm(["done"] * turns)))
    new_session(runner)
    config = RunConfig(timeout=300.0)
    before = _live_invocations()

    for _ in range(turns):
        list(runner.run(user_id="u1", session_id="s1", new_message="hi", run_config=config))

    assert _live_invocations() - before <= 2
