"""A finished run is freed by reference counting: it leaves no cycle for the cyclic GC.

With a thousand runs waiting on their models, every object a run keeps is walked by each full
collection; a run that ends in a reference cycle also stays in memory until one happens. Each
test runs with the GC disabled and looks for the run's :class:`Invocation` afterwards: found,
it is held by a cycle (the test drops every reference of its own first).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from reactivex import Observable

from adk_rx import LlmAgent, Runner
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.runner.invocation import Invocation
from adk_rx.rx import from_async
from adk_rx.rx._engine.channel import Channel
from adk_rx.rx.async_source import _Pump  # pyright: ignore[reportPrivateUsage]
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import USER, WAIT, in_memory_runner, new_session, stored

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _alive(*kinds: type) -> list[Any]:
    return [o for o in gc.get_objects() if isinstance(o, kinds)]


def _awaiting(wait: float = 0.0) -> Any:
    def reply(_: LlmRequest) -> Observable[LlmResponse]:
        async def answer() -> LlmResponse:
            await asyncio.sleep(wait)
            return LlmResponse.text("done")

        return from_async(answer)

    return reply


def _ran_to_the_end(runner: Runner) -> bool:
    """Runs one turn through ``run_async``; whether it completed in time."""
    done = threading.Event()
    runner.run_async(user_id=USER, session_id="s1", new_message="hi").subscribe(
        on_completed=done.set
    )
    return done.wait(WAIT)


def _runner(*script: Any) -> Runner:
    runner = in_memory_runner(LlmAgent(name="a", model=ScriptedLlm(list(script))))
    new_session(runner)
    return runner


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_run_events_turn_with_an_asyncio_model_leaves_nothing_behind() -> None:
    runner = _runner(_awaiting(), _awaiting())

    async def main() -> int:
        found = 0
        for _ in range(2):
            async for _event in runner.run_events(user_id=USER, session_id="s1", new_message="hi"):
                found += 1
        return found

    assert asyncio.run(main()) == 2
    assert _alive(Invocation, Channel, _Pump) == []
    assert [e.author for e in stored(runner)] == ["user", "a", "user", "a"]


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_run_async_turn_answered_on_the_background_loop_leaves_nothing_behind() -> None:
    runner = _runner(_awaiting(), "plain")
    for _ in range(2):
        done = threading.Event()
        runner.run_async(user_id=USER, session_id="s1", new_message="hi").subscribe(
            on_completed=done.set
        )
        assert done.wait(WAIT)
    assert _alive(Invocation, _Pump) == []


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def _from_a_thread(response: LlmResponse) -> Any:
    def reply(_: LlmRequest) -> Observable[LlmResponse]:
        def subscribe(observer: Any, _: Any = None) -> Any:
            def read() -> None:
                observer.on_next(response)
                observer.on_completed()

            threading.Thread(target=read).start()
            return None

        return rx.create(subscribe)

    return reply


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_tool_turn_whose_model_answers_from_another_thread_leaves_nothing_behind() -> None:
    call = types.Part(function_call=types.FunctionCall(name="add", args={"a": 1, "b": 2}))
    script = [
        _from_a_thread(LlmResponse(content=types.Content(role="model", parts=[call]))),
        _from_a_thread(LlmResponse.text("3")),
    ]
    runner = in_memory_runner(LlmAgent(name="a", model=ScriptedLlm(script), tools=[add]))
    new_session(runner)
    assert _ran_to_the_end(runner)
    assert _alive(Invocation) == []
    assert [e.author for e in stored(runner)] == ["user", "a", "a", "a"]


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_run_cancelled_while_its_model_waits_frees_the_models_task() -> None:
    # The stop path (answering open calls, recording the stop) still goes through stock
    # ``concat`` and ``merge``, whose recursive closures are cycles: the run itself is freed by
    # the next collection. The model's task and its pump go at once.
    runner = _runner(_awaiting(3600))
    tasks: list[asyncio.Task[Any]] = []

    async def main() -> None:
        events = runner.run_events(user_id=USER, session_id="s1", new_message="hi")
        waiting = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.01)
        tasks.extend(t for t in asyncio.all_tasks() if t is not asyncio.current_task())
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        await asyncio.sleep(0)  # the model's task handles its cancellation

    asyncio.run(main())
    assert len(tasks) == 2 and all(t.cancelled() for t in tasks)
    tasks.clear()
    assert _alive(_Pump, asyncio.Task) == []
    gc.collect()
    assert _alive(Invocation, Channel) == []
    assert [e.author for e in stored(runner)][:1] == ["user"]


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_task_the_model_starts_while_streaming_does_not_keep_the_run() -> None:
    # An HTTP client may start a task (a connection's reader, say) while the model's async
    # generator pulls an answer; that task keeps a copy of the context it was started in, and
    # may live on after the run.
    started: list[asyncio.Task[Any]] = []

    def reply(_: LlmRequest) -> Observable[LlmResponse]:
        async def answer() -> AsyncIterator[LlmResponse]:
            started.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))
            yield LlmResponse.text("done")

        return from_async(answer)

    runner = _runner(reply)
    done = threading.Event()
    runner.run_async(user_id=USER, session_id="s1", new_message="hi").subscribe(
        on_completed=done.set
    )
    try:
        assert done.wait(WAIT)
        assert _alive(Invocation, _Pump) == []
    finally:
        for task in started:
            task.get_loop().call_soon_threadsafe(task.cancel)
    assert [e.author for e in stored(runner)] == ["user", "a"]


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_tool_turn_on_the_io_pool_leaves_nothing_behind() -> None:
    # The Runner's driver waits for the tool and resumes itself: once the run is over it lets
    # go of the session writer, which holds the run's stage chain, which holds the driver.
    from adk_rx.runner.session_writer import SessionWriter
    from adk_rx.rx._engine.written_steps import WrittenSteps

    call = types.Part(function_call=types.FunctionCall(name="add", args={"a": 1, "b": 2}))
    script = [LlmResponse(content=types.Content(role="model", parts=[call])), "3"]
    runner = in_memory_runner(LlmAgent(name="a", model=ScriptedLlm(script), tools=[add]))
    new_session(runner)
    assert _ran_to_the_end(runner)
    runner.when_idle(user_id=USER, session_id="s1").run()
    assert _alive(Invocation, WrittenSteps, SessionWriter) == []
    assert [e.author for e in stored(runner)] == ["user", "a", "a", "a"]
