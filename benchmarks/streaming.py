"""Streaming and concurrency figures of the Runner, beside google-adk 2.13's (quoted).

    PYTHONPATH=. python benchmarks/streaming.py

Prints medians of 5 runs:
  * events per second through ``Runner.run_async`` in SSE mode, a scripted model streaming
    1,000 chunks (plus the aggregate) on the in-memory store;
  * seconds to finish 1,000 concurrent invocations whose model waits 50 ms asynchronously
    (one asyncio loop, one session each);
  * chunks a 10,000-chunk stream produces after ``dispose()`` (async generator and thread);
  * the thread hand-off rows of ``benchmarks/handoff.py``: stock ``observe_on`` against
    ``observe_on_bounded``.
Model responses are built before timing, so the figures are the runtime's own cost. Progress
goes to stderr; each aim gets a verdict. The google-adk figures are quoted from an earlier
measurement, not measured by this script (see ``report.QUOTED``).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from google.genai import types
from reactivex import Observable
from report import QUOTED, print_table, progress, repeat, verdict

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse, RunConfig, StreamingMode
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import model_content
from adk_rx.rx import from_async, from_blocking_iterable
from adk_rx.testing import ScriptedLlm

RUNS = 5
CHUNKS = 1_000
CONCURRENT = 1_000
MODEL_WAIT = 0.05
STOP_CHUNKS = 10_000
SSE = RunConfig(streaming_mode=StreamingMode.SSE)

# Quoted, not measured here (see report.QUOTED).
GOOGLE_ADK_EVENTS_PER_S = 4_273
GOOGLE_ADK_CONCURRENT_S = 3.75


def _stream(chunks: int) -> list[LlmResponse]:
    part = model_content(types.Part(text="x"))
    streamed = [LlmResponse(content=part, partial=True) for _ in range(chunks)]
    return [*streamed, LlmResponse.text("x" * chunks, turn_complete=True)]


def _runner(script: list[Any]) -> InMemoryRunner:
    return InMemoryRunner(LlmAgent(name="streamer", model=ScriptedLlm(script)), app_name="bench")


def sse_events_per_second() -> float:
    """One invocation streaming CHUNKS chunks; events received per second of the run."""
    runner = _runner([_stream(CHUNKS)])
    message = types.Content(role="user", parts=[types.Part(text="go")])
    runner.session_service.create_session(app_name="bench", user_id="u", session_id="s").run()
    received = 0

    def count(_: Any) -> None:
        nonlocal received
        received += 1

    gc.collect()
    start = time.perf_counter()
    runner.run_async(user_id="u", session_id="s", new_message=message, run_config=SSE).subscribe(
        count
    )
    elapsed = time.perf_counter() - start
    assert received == CHUNKS + 1, received
    return received / elapsed


def concurrent_seconds() -> float:
    """CONCURRENT invocations on one loop, each model call awaiting MODEL_WAIT seconds."""

    done = LlmResponse.text("done")
    message = types.Content(role="user", parts=[types.Part(text="hi")])

    def slow_reply(_: LlmRequest) -> Observable[LlmResponse]:
        async def reply() -> LlmResponse:
            await asyncio.sleep(MODEL_WAIT)
            return done

        return from_async(reply)

    runner = _runner([slow_reply] * CONCURRENT)
    for i in range(CONCURRENT):
        runner.session_service.create_session(
            app_name="bench", user_id="u", session_id=f"s{i}"
        ).run()

    async def one(i: int) -> int:
        return sum(
            [
                1
                async for _ in runner.run_events(
                    user_id="u", session_id=f"s{i}", new_message=message
                )
            ]
        )

    async def all_of_them() -> float:
        start = time.perf_counter()
        counts = await asyncio.gather(*(one(i) for i in range(CONCURRENT)))
        elapsed = time.perf_counter() - start
        assert counts == [1] * CONCURRENT
        return elapsed

    gc.collect()
    return asyncio.run(all_of_them())


class _Counted:
    """A STOP_CHUNKS-chunk stream that counts what it produces."""

    def __init__(self) -> None:
        self.produced = 0
        self.closed = threading.Event()

    def chunk(self) -> LlmResponse:
        self.produced += 1
        return LlmResponse(content=model_content(types.Part(text="x")), partial=True)


def chunks_after_dispose(source: str) -> int:
    """Disposes after 10 events; chunks produced after ``dispose()`` returned."""
    counted = _Counted()

    async def async_chunks() -> AsyncIterator[LlmResponse]:
        try:
            for _ in range(STOP_CHUNKS):
                yield counted.chunk()
                await asyncio.sleep(0)
        finally:
            counted.closed.set()

    def thread_chunks() -> Iterator[LlmResponse]:
        try:
            for _ in range(STOP_CHUNKS):
                yield counted.chunk()
        finally:
            counted.closed.set()

    play: Callable[[LlmRequest], Observable[LlmResponse]] = (
        (lambda _: from_async(async_chunks))
        if source == "async"
        else (lambda _: from_blocking_iterable(thread_chunks))
    )
    runner = _runner([play])
    runner.session_service.create_session(app_name="bench", user_id="u", session_id="s").run()
    seen = 0
    tenth = threading.Event()

    def on_next(_: Any) -> None:
        nonlocal seen
        seen += 1
        if seen == 10:
            tenth.set()

    subscription = runner.run_async(
        user_id="u", session_id="s", new_message="go", run_config=SSE
    ).subscribe(on_next)
    assert tenth.wait(10)
    subscription.dispose()
    at_dispose = counted.produced
    assert counted.closed.wait(10)
    return counted.produced - at_dispose


def _median(fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(RUNS))


def _handoff_rows() -> list[tuple[str, str, str, str]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import handoff
    except ImportError:
        return [("thread hand-off", "benchmarks/handoff.py not found", "", "")]
    stock = handoff.median_rate(handoff.stock_observe_on, handoff.N_STOCK)
    bounded = handoff.median_rate(handoff.bounded_block, handoff.N)
    return [
        ("stock observe_on(EventLoop), items/s", f"{stock:,.0f}", "", ""),
        (
            'observe_on_bounded(1024, "block"), items/s',
            f"{bounded:,.0f}",
            f"{bounded / stock:.1f}x stock",
            "",
        ),
    ]


def main() -> None:
    progress("warm-up")
    sse_events_per_second()  # warm-up: imports, first-use caches
    rate = statistics.median(repeat("SSE events/s", sse_events_per_second, RUNS))
    concurrent = statistics.median(repeat("1,000 concurrent invocations", concurrent_seconds, RUNS))
    after_async = statistics.median(
        repeat("chunks after dispose (async)", lambda: chunks_after_dispose("async"), RUNS)
    )
    after_thread = statistics.median(
        repeat("chunks after dispose (thread)", lambda: chunks_after_dispose("thread"), RUNS)
    )
    progress("thread hand-off (benchmarks/handoff.py)")
    # (measure, median, value for the aim, reference, aim)
    rows = [
        ("SSE events/s (1,000 chunks)", f"{rate:,.0f}", rate,
         f"4,273 (quoted); {rate / GOOGLE_ADK_EVENTS_PER_S:.0f}x", ">= 300,000"),
        ("1,000 concurrent 50 ms invocations, s", f"{concurrent:.3f}", concurrent,
         f"3.75 s (quoted); {GOOGLE_ADK_CONCURRENT_S / concurrent:.1f}x", "<= 0.25"),
        ("chunks after dispose, async generator", f"{after_async:.0f}", after_async, "", "<= 1"),
        ("chunks after dispose, thread", f"{after_thread:.0f}", after_thread, "", "<= 1"),
        *((name, value, 0.0, ratio, aim) for name, value, ratio, aim in _handoff_rows()),
    ]  # fmt: skip
    print_table(
        ("measure", "median", "google-adk 2.13 / ratio", "aim", "verdict"),
        [(name, text, ref, aim, verdict(value, aim)) for name, text, value, ref, aim in rows],
    )
    print(f"(medians of {RUNS} runs)")
    print(f"({QUOTED})")


if __name__ == "__main__":
    main()
