"""Runner.close(): no new runs, running ones may end, the rest are cancelled and recorded."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.errors import InvocationCancelledError, RunnerClosedError
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import call, calls

_BOUND = 20.0  # upper bound for what must happen; the test goes on as soon as it does
_QUIET = 0.3  # how long to watch for what must NOT happen


class _Run:
    """One subscription's outcome, observable from the test thread."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.error: Exception | None = None
        self.done = threading.Event()

    def on_error(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def on_completed(self) -> None:
        self.done.set()


class _Gate:
    """A sync tool that waits until the test opens the gate."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def tool(self) -> Any:
        def wait_for_gate() -> dict[str, str]:
            """Waits for the gate."""
            self.entered.set()
            self.opened.wait(_BOUND)
            return {"gate": "open"}

        return wait_for_gate


def _runner(gate: _Gate, *replies: Any) -> InMemoryRunner:
    script = [calls(call("wait_for_gate", {}, "g1")), *replies] if replies else ["hello"]
    agent = LlmAgent(name="bot", model=ScriptedLlm(script), tools=[gate.tool()])
    runner = InMemoryRunner(agent, app_name="app")
    for sid in ("s1", "s2"):
        runner.session_service.create_session(app_name="app", user_id="u", session_id=sid).run()
    return runner


def _start(runner: InMemoryRunner, sid: str = "s1") -> _Run:
    run = _Run()
    runner.run_async(user_id="u", session_id=sid, new_message="go").subscribe(
        run.events.append, run.on_error, run.on_completed
    )
    return run


def _stored(runner: InMemoryRunner, sid: str = "s1") -> list[str]:
    session = runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)
    return simplify_events(session.run().events)


def test_a_closed_runner_refuses_new_runs_with_a_clear_error() -> None:
    runner = _runner(_Gate())
    runner.close()

    run = _start(runner)

    assert run.done.is_set()
    assert isinstance(run.error, RunnerClosedError)
    assert "closed" in str(run.error)
    assert _stored(runner) == []


def test_close_lets_a_running_run_end_before_the_deadline() -> None:
    gate = _Gate()
    runner = _runner(gate, "done")
    run = _start(runner)
    assert gate.entered.wait(_BOUND)
    closer = threading.Thread(target=runner.close, kwargs={"timeout": _BOUND})
    closer.start()

    closer.join(_QUIET)
    assert closer.is_alive(), "close returned while a run was still going"
    assert isinstance(_start(runner, "s2").error, RunnerClosedError)  # closing: no new run
    gate.opened.set()
    closer.join(_BOUND)

    assert not closer.is_alive()
    assert run.done.is_set() and run.error is None
    assert simplify_events(run.events)[-1] == "bot: done"


def test_a_run_still_going_at_the_deadline_is_cancelled_and_recorded() -> None:
    gate = _Gate()
    runner = _runner(gate, "never")
    run = _start(runner)
    queued = _start(runner)  # waits for the first run's turn on the session
    assert gate.entered.wait(_BOUND)

    runner.close(timeout=0)
    gate.opened.set()

    assert run.done.is_set() and queued.done.is_set()
    assert isinstance(run.error, InvocationCancelledError)
    assert isinstance(queued.error, InvocationCancelledError)
    stored = _stored(runner)
    assert stored == [
        "user: go",
        "bot: FunctionCall(wait_for_gate, {})",
        'bot: FunctionResponse(wait_for_gate, {"error": "cancelled"})',
        "bot: [CANCELLED]",
    ]
    session = runner.session_service.get_session(app_name="app", user_id="u", session_id="s1")
    assert session.run().events[-1].error_code == "CANCELLED"


def test_with_closes_the_runner_on_leaving_the_block() -> None:
    with _runner(_Gate()) as runner:
        run = _start(runner)
        assert run.done.is_set() and run.error is None

    assert isinstance(_start(runner).error, RunnerClosedError)


@pytest.mark.asyncio
async def test_async_with_closes_without_blocking_runs_on_the_loop() -> None:
    async def pause() -> dict[str, str]:
        """Yields to the loop once."""
        await asyncio.sleep(0)
        return {"paused": True}

    agent = LlmAgent(
        name="bot", model=ScriptedLlm([calls(call("pause", {}, "p1")), "after"]), tools=[pause]
    )
    async with InMemoryRunner(agent, app_name="app") as runner:
        await runner.session_service.create_session(app_name="app", user_id="u", session_id="s1")
        run = _Run()
        runner.run_async(user_id="u", session_id="s1", new_message="go").subscribe(
            run.events.append, run.on_error, run.on_completed
        )
    # Leaving the block waited for the run, whose tool needed this loop.
    assert run.done.is_set() and run.error is None
    assert simplify_events(run.events)[-1] == "bot: after"
