"""Which thread runs what: events, callbacks, models and tools under the Runner.

The rule (docs/guides/model.md, "Threads"): an event reaches the subscriber on the thread
that produced it. Synchronous work stays on the subscribing thread; a sync tool runs on the I/O
scheduler and what follows it continues there; coroutines run on the runtime loop (the
caller's running loop, or adk_rx's background loop); deadlines fire on the timer thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx import BasePlugin, LlmAgent, LlmResponse, RunConfig, StreamingMode
from adk_rx.events import Event
from adk_rx.rx import from_async
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import (
    USER,
    WAIT,
    ThreadCensus,
    call_response,
    in_memory_runner,
    new_session,
    warm_pool,
)

pytestmark = pytest.mark.timeout(30)


def _here() -> str:
    return threading.current_thread().name


class Witness(BasePlugin):
    """Records the thread each hook and each emitted event ran on."""

    def __init__(self) -> None:
        super().__init__(name="witness")
        self.threads: list[tuple[str, str]] = []

    def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        self.threads.append(("before_model", _here()))

    def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        self.threads.append(("after_model", _here()))

    def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        self.threads.append(("before_tool", _here()))

    def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        self.threads.append(("on_event", _here()))

    def of(self, hook: str) -> set[str]:
        return {thread for name, thread in self.threads if name == hook}


def _events_with_threads(runner: Any, **kwargs: Any) -> list[tuple[Event, str]]:
    return (
        runner.run_async(user_id=USER, session_id="s1", new_message="hi", **kwargs)
        .pipe(ops.map(lambda e: (e, _here())), ops.to_list())
        .run()
    )


def _async_reply(text: str) -> Any:
    async def reply() -> LlmResponse:
        await asyncio.sleep(0)
        return LlmResponse.text(text)

    return lambda _: from_async(reply)


def test_synchronous_work_stays_on_the_subscribing_thread() -> None:
    witness = Witness()
    runner = in_memory_runner(LlmAgent(name="a", model=ScriptedLlm(["hi"])), plugins=[witness])
    new_session(runner)
    emitted: list[str] = []
    done = threading.Event()

    def subscribe_on_a_thread() -> None:
        runner.run_async(user_id=USER, session_id="s1", new_message="hi").subscribe(
            lambda _: emitted.append(_here()), on_completed=done.set
        )

    worker = threading.Thread(target=subscribe_on_a_thread, name="caller")
    worker.start()
    worker.join(WAIT)

    assert done.is_set()
    assert emitted == ["caller"]
    assert {thread for _, thread in witness.threads} == {"caller"}


def test_an_async_model_delivers_on_the_background_loop_when_the_caller_has_none() -> None:
    witness = Witness()
    llm = ScriptedLlm([_async_reply("from a coroutine")])
    runner = in_memory_runner(LlmAgent(name="a", model=llm), plugins=[witness])
    new_session(runner)

    events = _events_with_threads(runner)

    assert [(e.text(), thread) for e, thread in events] == [("from a coroutine", "adk_rx-loop")]
    assert witness.of("before_model") == {threading.current_thread().name}
    assert witness.of("after_model") == witness.of("on_event") == {"adk_rx-loop"}


@pytest.mark.asyncio
async def test_run_events_runs_coroutines_on_the_callers_loop() -> None:
    ran_on: list[str] = []

    def play(_: Any) -> Any:
        async def chunks() -> AsyncIterator[LlmResponse]:
            ran_on.append(_here())
            yield LlmResponse.text("one", partial=True)
            yield LlmResponse.text("one")

        return from_async(chunks)

    runner = in_memory_runner(LlmAgent(name="a", model=ScriptedLlm([play])))
    new_session(runner)
    consumer = _here()
    got: list[tuple[bool | None, str]] = []

    async for event in runner.run_events(
        user_id=USER,
        session_id="s1",
        new_message="hi",
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    ):
        got.append((event.partial, _here()))

    assert ran_on == [consumer]
    assert got == [(True, consumer), (None, consumer)]


def test_a_sync_tool_runs_on_the_io_scheduler_and_the_turn_continues_there() -> None:
    pool = ThreadPoolScheduler(max_workers=1)
    on_thread: list[str] = []

    def lookup() -> str:
        """Looks up."""
        on_thread.append(_here())
        return "found"

    witness = Witness()
    llm = ScriptedLlm([call_response("lookup", {}, "c1"), "done"])
    runner = in_memory_runner(
        LlmAgent(name="a", model=llm, tools=[lookup]), plugins=[witness], io_scheduler=pool
    )
    new_session(runner)
    caller = _here()

    events = _events_with_threads(runner)

    worker = on_thread[0]
    assert worker != caller
    # The tool's response is emitted on its worker. The next step starts on whichever thread
    # saw the step end last: the worker, or the caller if the tool finished before the
    # caller's subscribe() returned (a race the loop resolves without blocking either).
    threads = [thread for _, thread in events]
    assert threads[:2] == [caller, worker]
    assert threads[2] in (worker, caller)
    assert witness.of("before_tool") == {caller}
    second_model_call = [t for name, t in witness.threads if name == "before_model"][1]
    assert second_model_call == threads[2]
    pool.executor.shutdown()


def test_the_timeout_fires_on_the_shared_timer_thread() -> None:
    hang_started = threading.Event()

    async def hang() -> LlmResponse:
        hang_started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    llm = ScriptedLlm([lambda _: from_async(hang)])
    runner = in_memory_runner(LlmAgent(name="a", model=llm))
    new_session(runner)
    errors: list[tuple[str, str]] = []
    failed = threading.Event()

    def on_error(error: Exception) -> None:
        errors.append((type(error).__name__, _here()))
        failed.set()

    runner.run_async(
        user_id=USER, session_id="s1", new_message="hi", run_config=RunConfig(timeout=0.05)
    ).subscribe(on_error=on_error)

    assert failed.wait(WAIT)
    assert hang_started.is_set()
    assert errors == [("InvocationTimeoutError", "adk_rx-timer")]


def test_many_runs_leave_no_thread_behind() -> None:
    pool = warm_pool(2)

    def echo(text: str) -> str:
        """Echoes."""
        return text

    turns = 20
    script: list[Any] = []
    for i in range(turns):
        script += [call_response("echo", {"text": str(i)}, f"c{i}"), _async_reply(f"reply {i}")]
    runner = in_memory_runner(
        LlmAgent(name="a", model=ScriptedLlm(script), tools=[echo]), io_scheduler=pool
    )
    new_session(runner)
    census = ThreadCensus()

    for i in range(turns):
        texts = [
            e.text()
            for e in runner.run(
                user_id=USER,
                session_id="s1",
                new_message=f"turn {i}",
                run_config=RunConfig(timeout=30.0, tool_timeout=30.0),
            )
        ]
        assert texts[-1] == f"reply {i}"

    assert census.leftovers() == []
    pool.executor.shutdown()
