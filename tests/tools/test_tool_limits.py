"""A tool's own deadline (``timeout``) and concurrency limit (``max_concurrency``).

Deadlines run in virtual time (the Runner's timer scheduler is a TestScheduler); the
bulkhead is shared by every invocation that calls the same tool object.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from adk_rx import ConfigurationError, FunctionTool, LlmAgent, RunConfig, ToolContext
from adk_rx.events import Event
from adk_rx.models.llm_request import LlmRequest
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import WAIT, call_response, in_memory_runner, new_session, stored

pytestmark = pytest.mark.timeout(30)


class Calls:
    """An Observable tool whose calls each wait on a Subject the test completes."""

    def __init__(self) -> None:
        self.started: list[Subject[Any]] = []
        self.disposed = 0

    def __call__(self) -> Observable[dict[str, Any]]:
        def start(_: Any) -> Observable[Any]:
            answer: Subject[Any] = Subject()
            self.started.append(answer)
            return answer.pipe(ops.finally_action(self._dispose))

        return rx.defer(start)

    def _dispose(self) -> None:
        self.disposed += 1

    def answer(self, index: int, value: str) -> None:
        self.started[index].on_next({"result": value})
        self.started[index].on_completed()


def responses(events: list[Event]) -> list[Any]:
    return [r.response for e in events for r in e.get_function_responses()]


def run(runner: Any, session_id: str, config: RunConfig | None = None) -> tuple[list[Event], Any]:
    events: list[Event] = []
    errors: list[Exception] = []
    subscription = runner.run_async(
        user_id="u1", session_id=session_id, new_message="go", run_config=config or RunConfig()
    ).subscribe(events.append, errors.append)
    return events, subscription


def test_a_tools_own_timeout_wins_over_run_config_and_names_the_tool() -> None:
    calls = Calls()

    def hangs() -> Observable[dict[str, Any]]:
        """Never answers."""
        return calls()

    clock = TestScheduler()
    tool = FunctionTool(hangs, timeout=2.0)
    runner = in_memory_runner(
        LlmAgent(name="agent", model=ScriptedLlm([call_response("hangs"), "ok"]), tools=[tool]),
        timer_scheduler=clock,
    )
    new_session(runner)
    events, _ = run(runner, "s1", RunConfig(tool_timeout=10.0))

    clock.advance_to(1.9)
    assert calls.disposed == 0
    clock.advance_to(2.0)

    assert calls.disposed == 1
    assert responses(events) == [{"error": "tool 'hangs' timed out after 2 s"}]
    assert events[-1].text() == "ok"


def test_a_sync_tool_past_its_deadline_sees_tool_context_cancelled() -> None:
    started, saw_cancel = threading.Event(), threading.Event()

    def crunch(tool_context: ToolContext) -> str:
        """Works until told to stop."""
        started.set()
        while not tool_context.cancelled:
            time.sleep(0.001)  # the tool's own polling, as long sync work does
        saw_cancel.set()
        return "stopped"

    clock = TestScheduler()
    tool = FunctionTool(crunch, timeout=5.0)
    runner = in_memory_runner(
        LlmAgent(name="agent", model=ScriptedLlm([call_response("crunch"), "ok"]), tools=[tool]),
        timer_scheduler=clock,
    )
    new_session(runner)
    done = threading.Event()
    events: list[Event] = []
    runner.run_async(user_id="u1", session_id="s1", new_message="go").pipe(
        ops.finally_action(done.set)
    ).subscribe(events.append)
    assert started.wait(WAIT)

    clock.advance_to(5.0)

    assert saw_cancel.wait(WAIT)
    assert done.wait(WAIT)
    assert responses(events) == [{"error": "tool 'crunch' timed out after 5 s"}]


def test_an_async_tools_task_is_cancelled_at_its_deadline() -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def slow() -> str:
        """Takes forever."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    clock = TestScheduler()
    runner = in_memory_runner(
        LlmAgent(
            name="agent",
            model=ScriptedLlm([call_response("slow"), "ok"]),
            tools=[FunctionTool(slow, timeout=1.5)],
        ),
        timer_scheduler=clock,
    )
    new_session(runner)
    done = threading.Event()
    runner.run_async(user_id="u1", session_id="s1", new_message="go").pipe(
        ops.finally_action(done.set)
    ).subscribe()
    assert started.wait(WAIT)

    clock.advance_to(1.5)

    assert cancelled.wait(WAIT)
    assert done.wait(WAIT)


def _call_then_done(request: LlmRequest) -> Any:
    """Each session's turn: call the tool, then (seeing its answer) say done."""
    last = request.contents[-1].parts or []
    return "done" if any(p.function_response for p in last) else call_response("work")


def _limited_runner(calls: Calls, **tool: Any) -> tuple[Any, TestScheduler]:
    def work() -> Observable[dict[str, Any]]:
        """Does some work."""
        return calls()

    clock = TestScheduler()
    limited = FunctionTool(work, **tool)
    runner = in_memory_runner(
        LlmAgent(name="agent", model=ScriptedLlm([_call_then_done] * 6), tools=[limited]),
        timer_scheduler=clock,
    )
    for session_id in ("s1", "s2", "s3"):
        new_session(runner, session_id)
    return runner, clock


def test_max_concurrency_holds_calls_of_other_invocations_in_line() -> None:
    calls = Calls()
    runner, _ = _limited_runner(calls, max_concurrency=1)

    first, _ = run(runner, "s1")
    second, _ = run(runner, "s2")
    assert len(calls.started) == 1  # the second invocation's call waits for the permit

    calls.answer(0, "one")
    assert len(calls.started) == 2
    calls.answer(1, "two")

    assert responses(first) == [{"result": "one"}]
    assert responses(second) == [{"result": "two"}]


def test_a_waiting_call_whose_run_is_disposed_never_runs() -> None:
    calls = Calls()
    runner, _ = _limited_runner(calls, max_concurrency=1)

    run(runner, "s1")
    _, waiting = run(runner, "s2")
    third, _ = run(runner, "s3")
    waiting.dispose()
    calls.answer(0, "one")

    assert len(calls.started) == 2  # s1's call, then s3's: s2's never started
    calls.answer(1, "three")
    assert responses(third) == [{"result": "three"}]
    assert responses(stored(runner, "s2")) == [{"error": "cancelled"}]


def test_waiting_for_a_permit_counts_toward_the_tools_deadline() -> None:
    calls = Calls()
    runner, clock = _limited_runner(calls, max_concurrency=1, timeout=3.0)

    run(runner, "s1")
    second, _ = run(runner, "s2")
    clock.advance_to(2.0)
    calls.answer(0, "one")  # at 2 s the permit frees: s2's call starts with 1 s left
    assert len(calls.started) == 2

    clock.advance_to(3.0)

    assert calls.disposed == 2
    assert responses(second) == [{"error": "tool 'work' timed out after 3 s"}]


def test_tool_limits_are_checked() -> None:
    def work() -> str:
        """Works."""
        return "ok"

    with pytest.raises(ConfigurationError, match="timeout"):
        FunctionTool(work, timeout=0)
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        FunctionTool(work, max_concurrency=0)
