"""Regressions found in review: queued runs, late errors, recovery and escalation records."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex as rx
from google.genai import types

from adk_rx import BaseLlm, InMemoryRunner, LlmAgent, LlmResponse, ModelError, ParallelAgent
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm

pytestmark = pytest.mark.timeout(30)


def _text(text: str) -> LlmResponse:
    return LlmResponse(content=model_content(types.Part(text=text)))


def _call(name: str, call_id: str) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={}))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def _runner(agent: Any) -> InMemoryRunner:
    runner = InMemoryRunner(agent)
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    return runner


class _Outcome:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.error: Exception | None = None
        self.done = threading.Event()

    def observe(self, runner: InMemoryRunner, text: str) -> Any:
        return runner.run_async(user_id="u", session_id="s", new_message=text).subscribe(
            self.events.append, self._failed, self.done.set
        )

    def _failed(self, error: Exception) -> None:
        self.error = error
        self.done.set()


def test_cancelling_a_queued_run_does_not_let_the_next_one_overlap_the_running_one() -> None:
    release = threading.Event()
    running: list[str] = []
    overlap: list[int] = []
    lock = threading.Lock()

    def gated(request: Any) -> rx.Observable[LlmResponse]:
        def subscribe(observer: Any, scheduler: Any = None) -> None:
            def work() -> None:
                with lock:
                    running.append("x")
                    overlap.append(len(running))
                release.wait(10)
                with lock:
                    running.pop()
                observer.on_next(_text("hi"))
                observer.on_completed()

            threading.Thread(target=work).start()

        return rx.create(subscribe)

    runner = _runner(LlmAgent(name="a", model=ScriptedLlm([gated, gated, gated])))
    first, second, third = _Outcome(), _Outcome(), _Outcome()
    first.observe(runner, "1")
    queued = second.observe(runner, "2")
    third.observe(runner, "3")
    queued.dispose()  # cancel the run in the middle of the queue
    assert not third.done.is_set()
    assert overlap == [1]  # the third run did not start beside the first
    release.set()
    assert first.done.wait(10) and third.done.wait(10)
    assert max(overlap) == 1


def test_an_async_model_error_callback_recovers_a_model_that_fails_while_subscribing() -> None:
    async def recover(callback_context: Any, llm_request: Any, error: Exception) -> LlmResponse:
        await asyncio.sleep(0)
        return _text("recovered")

    runner = _runner(
        LlmAgent(
            name="a", model=ScriptedLlm([RuntimeError("boom")]), on_model_error_callback=recover
        )
    )
    outcome = _Outcome()
    outcome.observe(runner, "hi")
    assert outcome.done.wait(10)
    assert outcome.error is None
    assert [e.text() for e in outcome.events] == ["recovered"]


def test_a_model_that_raises_while_subscribing_after_a_sync_tool_errors_the_run() -> None:
    class Flaky(BaseLlm):
        calls = 0

        def generate_content(self, llm_request: Any, stream: bool = False) -> Any:
            Flaky.calls += 1
            first = Flaky.calls == 1

            def subscribe(observer: Any, scheduler: Any = None) -> None:
                if not first:
                    raise RuntimeError("model subscribe failed")
                observer.on_next(_call("tool", "c1"))
                observer.on_completed()

            return rx.create(subscribe)

    def tool() -> str:
        """A sync tool: the next step starts on an I/O thread."""
        return "ok"

    runner = _runner(LlmAgent(name="a", model=Flaky(model="x"), tools=[tool]))
    outcome = _Outcome()
    outcome.observe(runner, "hi")
    assert outcome.done.wait(10), "the error was lost and the run hung"
    assert isinstance(outcome.error, ModelError)
    assert "model subscribe failed" in str(outcome.error)


def test_a_long_queue_of_runs_on_one_session_all_finish_in_order() -> None:
    release = threading.Event()

    def first(request: Any) -> rx.Observable[LlmResponse]:
        def subscribe(observer: Any, scheduler: Any = None) -> None:
            def work() -> None:
                release.wait(10)
                observer.on_next(_text("first"))
                observer.on_completed()

            threading.Thread(target=work).start()

        return rx.create(subscribe)

    count = 80
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm([first] + ["ok"] * count)))
    finished: list[int] = []
    all_done = threading.Event()

    def completed(index: int) -> None:
        finished.append(index)
        if len(finished) == count + 1:
            all_done.set()

    for index in range(count + 1):
        runner.run_async(user_id="u", session_id="s", new_message=f"m{index}").subscribe(
            on_completed=lambda index=index: completed(index)
        )
    release.set()
    assert all_done.wait(20), f"only {len(finished)} of {count + 1} runs finished"
    assert finished == list(range(count + 1))
    assert not runner.is_busy(user_id="u", session_id="s")


def test_a_call_left_open_in_a_branch_cancelled_by_an_escalation_gets_an_answer() -> None:
    slow_started = threading.Event()
    release = threading.Event()

    def slow_tool() -> str:
        """Runs until released."""
        slow_started.set()
        release.wait(10)
        return "done"

    def escalate(tool_context: Any) -> str:
        """Escalates once the slow tool is running."""
        slow_started.wait(10)
        tool_context.actions.escalate = True
        return "escalated"

    a = LlmAgent(
        name="a", model=ScriptedLlm([_call("slow_tool", "slow"), "a done"]), tools=[slow_tool]
    )
    b = LlmAgent(
        name="b", model=ScriptedLlm([_call("escalate", "esc"), "b done"]), tools=[escalate]
    )
    runner = _runner(ParallelAgent(name="p", sub_agents=[a, b]))
    outcome = _Outcome()
    outcome.observe(runner, "hi")
    assert outcome.done.wait(10)
    release.set()
    stored = runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    answers = {r.id: r.response for e in stored.events for r in e.get_function_responses()}
    assert answers["slow"] == {"error": "cancelled"}
    assert answers["esc"] == {"result": "escalated"}
