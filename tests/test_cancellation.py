"""Cancellation by disposal: streams and tools stop, and the session stays valid."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import LlmAgent, RunConfig, Runner, StreamingMode, ToolContext
from adk_rx.events import Event
from adk_rx.rx import runtime_loop
from adk_rx.rx._engine.settle import HELD_AT_MOST
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import (
    WAIT,
    ChunkStream,
    ThreadCensus,
    call_response,
    drain_loop_tasks,
    in_memory_runner,
    new_session,
    stored,
    unanswered_calls,
    warm_pool,
)

pytestmark = pytest.mark.timeout(30)

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
CHUNKS = 10_000
STALL = 50  # chunks a stalling stream hands out first: more than a consumer reads here


class Receiver:
    """Collects events; ``reached`` is set once ``k`` events arrived."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.events: list[Event] = []
        self.errors: list[Exception] = []
        self.completed = threading.Event()
        self.reached = threading.Event()

    def subscribe(self, events: Observable[Event]) -> Any:
        return events.subscribe(self._next, self._error, self.completed.set)

    def _next(self, event: Event) -> None:
        self.events.append(event)
        if len(self.events) >= self.k:
            self.reached.set()

    def _error(self, error: Exception) -> None:
        self.errors.append(error)


def _assert_cancelled_session(runner: Runner, open_call: str | None = None) -> None:
    events = stored(runner)
    assert events[-1].error_code == "CANCELLED"
    assert events[-1].turn_complete is True
    assert not any(e.partial for e in events)
    if open_call is not None:
        answers = [r for e in events for r in e.get_function_responses() if r.id == open_call]
        assert [a.response for a in answers] == [{"error": "cancelled"}]


def _dispose_mid_stream(
    runner: Runner, stream: ChunkStream, k: int = 5
) -> tuple[int, float, Receiver]:
    """Disposes after ``k`` events; returns (chunks produced when dispose returned, its start)."""
    receiver = Receiver(k)
    subscription = receiver.subscribe(
        runner.run_async(user_id="u1", session_id="s1", new_message="go", run_config=SSE)
    )
    assert receiver.reached.wait(WAIT)
    started = time.perf_counter()
    subscription.dispose()
    at_dispose = stream.produced
    assert stream.closed.wait(WAIT)
    return at_dispose, started, receiver


@pytest.mark.parametrize("source", ["async generator", "thread"])
def test_dispose_mid_stream_stops_the_producer_and_leaves_nothing_behind(source: str) -> None:
    pool = warm_pool(2)
    census = ThreadCensus()  # the pool's workers belong to the baseline
    stream = ChunkStream(CHUNKS)
    play: Callable[..., Observable[Any]] = (
        stream.from_async if source == "async generator" else stream.from_thread(pool)
    )
    llm = ScriptedLlm([play, "the next turn"])
    runner = in_memory_runner(LlmAgent(name="writer", model=llm), io_scheduler=pool)
    new_session(runner)

    at_dispose, started, receiver = _dispose_mid_stream(runner, stream)

    assert stream.produced - at_dispose <= 1
    assert stream.closed_at - started < 0.1
    assert stream.produced < CHUNKS
    assert all(e.partial for e in receiver.events)
    assert not receiver.errors and not receiver.completed.is_set()
    _assert_cancelled_session(runner)
    assert census.leftovers() == []
    assert drain_loop_tasks() == []

    follow_up = runner.run(user_id="u1", session_id="s1", new_message="again")
    assert [e.text() for e in follow_up] == ["the next turn"]
    pool.executor.shutdown()


def test_dispose_during_a_slow_async_tool_cancels_its_task() -> None:
    started = threading.Event()
    cancelled = threading.Event()

    async def lookup(city: str) -> dict[str, str]:
        """Looks a city up, slowly."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"city": city}

    census = ThreadCensus()
    llm = ScriptedLlm([call_response("lookup", {"city": "Oslo"}, "c1"), "fine, no lookup"])
    runner = in_memory_runner(LlmAgent(name="helper", model=llm, tools=[lookup]))
    new_session(runner)
    receiver = Receiver(1)
    subscription = receiver.subscribe(
        runner.run_async(user_id="u1", session_id="s1", new_message="weather?")
    )
    assert started.wait(WAIT)

    subscription.dispose()

    assert cancelled.wait(WAIT)
    assert [e.get_function_calls()[0].id for e in receiver.events] == ["c1"]
    _assert_cancelled_session(runner, open_call="c1")
    assert drain_loop_tasks() == []
    assert census.leftovers() == []

    follow_up = list(runner.run(user_id="u1", session_id="s1", new_message="and now?"))
    assert [e.text() for e in follow_up] == ["fine, no lookup"]
    assert unanswered_calls(llm.requests[-1]) == set()


def test_dispose_during_a_slow_sync_tool_lets_it_stop_cooperatively() -> None:
    started = threading.Event()
    saw_cancel = threading.Event()
    steps: list[int] = []

    def crunch(tool_context: ToolContext) -> dict[str, int]:
        """Crunches numbers until done or cancelled."""
        started.set()
        pace = threading.Event()
        for step in range(10_000):
            if tool_context.cancelled:
                saw_cancel.set()
                break
            steps.append(step)
            pace.wait(0.001)  # one slice of blocking work
        return {"steps": len(steps)}

    pool = warm_pool(2)
    census = ThreadCensus()
    llm = ScriptedLlm([call_response("crunch", {}, "c7"), "stopped crunching"])
    runner = in_memory_runner(LlmAgent(name="helper", model=llm, tools=[crunch]), io_scheduler=pool)
    new_session(runner)
    receiver = Receiver(1)
    subscription = receiver.subscribe(
        runner.run_async(user_id="u1", session_id="s1", new_message="crunch")
    )
    assert started.wait(WAIT)

    subscription.dispose()

    assert saw_cancel.wait(WAIT)
    assert len(steps) < 10_000
    _assert_cancelled_session(runner, open_call="c7")
    assert len(receiver.events) == 1  # the call; its late result is dropped
    assert census.leftovers() == []

    follow_up = list(runner.run(user_id="u1", session_id="s1", new_message="next"))
    assert [e.text() for e in follow_up] == ["stopped crunching"]
    assert unanswered_calls(llm.requests[-1]) == set()
    pool.executor.shutdown()


def _streaming_run(llm: ScriptedLlm) -> tuple[Runner, Any]:
    """A streamed run of a writer on ``llm``, read through ``Runner.run`` with a buffer of 8."""
    runner = in_memory_runner(LlmAgent(name="writer", model=llm))
    new_session(runner)
    events = runner.run(
        user_id="u1", session_id="s1", new_message="go", run_config=SSE, max_buffer=8
    )
    return runner, events


def _leave_after_four(events: Any) -> None:
    """Reads four events, then leaves the iterator."""
    for index, _ in enumerate(events):
        if index == 3:
            break
    events.close()


def test_leaving_run_early_cancels_the_invocation() -> None:
    # The stream stalls after STALL chunks, so it is closed only if the cancellation reaches
    # it.
    stream = ChunkStream(CHUNKS, stall_after=STALL)
    llm = ScriptedLlm([stream.from_async])
    runner, events = _streaming_run(llm)
    _leave_after_four(events)
    # The cancelled run releases the session once its stop was recorded.
    runner.when_idle(user_id="u1", session_id="s1").run()

    assert stream.closed.wait(WAIT)  # cancelled: the stalled stream never ends by itself
    assert stream.produced <= STALL
    _assert_cancelled_session(runner)


def _loop_turns(count: int) -> None:
    """Lets adk_rx's background loop run ``count`` turns (a stream that is not paused makes
    one chunk per turn there)."""

    async def turns() -> None:
        for _ in range(count):
            await asyncio.sleep(0)

    asyncio.run_coroutine_threadsafe(turns(), runtime_loop()).result(WAIT)


def _piped(stream: ChunkStream) -> Callable[[Any], Observable[Any]]:
    return lambda request: stream.from_async(request).pipe(ops.map(lambda chunk: chunk))


@pytest.mark.parametrize("piped", [False, True], ids=["from_async", "from_async piped"])
def test_run_holds_an_async_model_at_the_buffers_bounds_while_its_consumer_waits(
    piped: bool,
) -> None:
    # The run is subscribed on the iterator's thread, which replays the chunks the model's
    # answer held while the step took over, and waits there for the consumer; the model on
    # the event loop never waits, but it is paused, so it stays within the two bounds.
    stream = ChunkStream(CHUNKS)
    llm = ScriptedLlm([_piped(stream) if piped else stream.from_async])
    runner, events = _streaming_run(llm)
    next(events)
    _loop_turns(200)
    ahead = stream.produced
    events.close()  # type: ignore[attr-defined]
    runner.when_idle(user_id="u1", session_id="s1").run()

    assert ahead <= 1 + 8 + HELD_AT_MOST + 2
    assert stream.closed.wait(WAIT)
    _assert_cancelled_session(runner)


@pytest.mark.parametrize("piped", [False, True], ids=["from_async", "from_async piped"])
def test_leaving_run_early_disposes_the_model_before_its_next_chunk(piped: bool) -> None:
    stream = ChunkStream(CHUNKS)
    llm = ScriptedLlm([_piped(stream) if piped else stream.from_async])
    runner, events = _streaming_run(llm)
    for index, _ in enumerate(events):
        if index == 3:
            break
    produced = stream.produced
    events.close()  # type: ignore[attr-defined]
    _loop_turns(200)

    assert stream.closed.wait(WAIT)
    assert stream.produced <= produced + 1  # at most the chunk being made as it was disposed
    runner.when_idle(user_id="u1", session_id="s1").run()
    _assert_cancelled_session(runner)


def test_leaving_run_early_cancels_a_run_still_inside_its_synchronous_subscribe() -> None:
    # A model that answers at once: the whole run goes on as plain calls inside subscribe()
    # on the iterator's thread, waiting in on_next for the consumer. Leaving cancels it there
    # (the iterator had its handle before the run started), not once it ran to its end.
    llm = ScriptedLlm([["x"] * 5_000])
    runner, events = _streaming_run(llm)
    _leave_after_four(events)
    runner.when_idle(user_id="u1", session_id="s1").run()

    _assert_cancelled_session(runner)
    assert [e.author for e in stored(runner)] == ["user", "writer"]  # no answer stored


@pytest.mark.asyncio
async def test_leaving_run_events_early_cancels_the_invocation_on_the_callers_loop() -> None:
    stream = ChunkStream(CHUNKS)
    llm = ScriptedLlm([stream.from_async])
    runner = in_memory_runner(LlmAgent(name="writer", model=llm))
    new_session(runner)
    seen = 0

    events = runner.run_events(user_id="u1", session_id="s1", new_message="go", run_config=SSE)
    async for _ in events:
        seen += 1
        if seen == 3:
            break
    await events.aclose()  # type: ignore[attr-defined]

    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    if others:
        await asyncio.wait(others, timeout=WAIT)
    assert [t for t in others if not t.done()] == []
    assert stream.closed.is_set()
    assert stream.threads == {threading.current_thread().name}
    assert stream.produced < CHUNKS
    _assert_cancelled_session(runner)


def test_a_queued_run_disposed_before_its_turn_never_runs() -> None:
    llm = ScriptedLlm([lambda _: rx.never(), "reply to three"])
    runner = in_memory_runner(LlmAgent(name="writer", model=llm))
    new_session(runner)

    running = runner.run_async(user_id="u1", session_id="s1", new_message="one").subscribe()
    queued = Receiver(1)
    waiting = queued.subscribe(runner.run_async(user_id="u1", session_id="s1", new_message="two"))
    waiting.dispose()
    running.dispose()
    third = list(runner.run(user_id="u1", session_id="s1", new_message="three"))

    assert [e.text() for e in third] == ["reply to three"]
    assert queued.events == []
    assert len(llm.requests) == 2
    texts = [(e.author, e.text(), e.error_code) for e in stored(runner)]
    assert texts == [
        ("user", "one", None),
        ("writer", "", "CANCELLED"),
        ("user", "three", None),
        ("writer", "reply to three", None),
    ]
