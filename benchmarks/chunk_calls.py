"""Framework calls and microseconds per streamed chunk: what one more chunk of an SSE turn costs.

    python benchmarks/chunk_calls.py [--model=scripted|user|thread] [-v]

A streaming turn (``StreamingMode.SSE``) whose model streams N partial chunks, then the
aggregate, runs through ``Runner.run_async`` as ``call_counts.py`` runs its turns. The calls of
one more chunk are ``(calls(N=101) - calls(N=1)) / 100``: the turn's own set-up cancels out,
and so does everything the model does itself (its functions are not counted, as in
``call_counts.py``; its responses are built before counting). The count is exact. The time
per chunk is ``(t(N=1,001) - t(N=1)) / 1,000`` in CPU time of the process (all its threads, so
waiting for a busy core is not counted), the least of 7 runs, taken in a process of its own
(a thread started while counting keeps the profile hook, and the counting needs the hook in
the threads it starts): give the machine's load with it all the same. ``-v`` lists where one
chunk's calls go.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter

from call_counts import _Profiler, _turn  # pyright: ignore[reportPrivateUsage]
from google.genai import types
from reactivex.scheduler import ThreadPoolScheduler
from user_models import KIND, model  # beside this script (run as a script)

from adk_rx import InMemorySessionService, LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
FEW, MANY = 1, 101
TIMED = 1_001
AIM_US = 1.0


def _stream(chunks: int) -> list[LlmResponse]:
    """One streamed model call: ``chunks`` partial responses, then the aggregate."""
    streamed = [
        LlmResponse(content=model_content(types.Part(text=f"c{i}")), partial=True)
        for i in range(chunks)
    ]
    return [*streamed, LlmResponse.text("".join(f"c{i}" for i in range(chunks)))]


def _runner(chunks: int, turns: int) -> tuple[Runner, InMemorySessionService]:
    agent = LlmAgent(
        name="bench_agent", model=model([_stream(chunks) for _ in range(turns)]), instruction="Go."
    )
    service = InMemorySessionService()
    runner = Runner(
        app_name="bench", agent=agent, session_service=service, io_scheduler=ThreadPoolScheduler(1)
    )
    return runner, service


def _message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text="go")])


def calls_per_chunk(where: Counter[str] | None = None) -> float:
    """Calls one more chunk costs (exact; the turn's set-up cancels out)."""
    import user_models

    import adk_rx.testing.scripted as scripted

    profiler = _Profiler(frozenset({scripted.__file__, user_models.__file__}))
    profiler.install()
    found: dict[int, int] = {}
    counters: dict[int, Counter[str]] = {}
    try:
        for chunks in (FEW, MANY):
            runner, service = _runner(chunks, 2)
            warm = threading.Event()
            _turn(runner, service, _message(), SSE)(warm)
            warm.wait(10)
            counter: Counter[str] | None = Counter() if where is not None else None
            found[chunks] = profiler.count(_turn(runner, service, _message(), SSE), counter)
            if counter is not None:
                counters[chunks] = counter
    finally:
        profiler.remove()
    if where is not None:
        where.update(counters[MANY])
        where.subtract(counters[FEW])
    return (found[MANY] - found[FEW]) / (MANY - FEW)


def _seconds(chunks: int) -> float:
    runner, service = _runner(chunks, 1)
    start = _turn(runner, service, _message(), SSE)
    done = threading.Event()
    began = time.process_time()
    start(done)
    done.wait(60)
    return time.process_time() - began


def us_per_chunk(runs: int = 7) -> float:
    """CPU microseconds one more chunk costs, end to end (the least of ``runs``)."""
    _seconds(TIMED)  # warm-up
    per: list[float] = []
    for _ in range(runs):
        per.append((_seconds(TIMED) - _seconds(FEW)) / (TIMED - FEW) * 1e6)
    return min(per)


def main() -> None:
    if "--us" in sys.argv:  # the timing, in a process of its own
        print(us_per_chunk())
        return
    where: Counter[str] | None = Counter() if "-v" in sys.argv else None
    timed = subprocess.run(
        [sys.executable, __file__, "--us", f"--model={KIND}"],
        capture_output=True,
        text=True,
        check=True,
    )
    us = float(timed.stdout.strip().splitlines()[-1])
    calls = calls_per_chunk(where)
    print(f"(adk_rx with the {KIND} model, SSE)")
    print(f"calls per chunk   {calls:8.2f}")
    print(f"us per chunk      {us:8.2f}   (CPU; aim <= {AIM_US:.0f} us of framework work)")
    if where is not None:
        print(f"\none chunk's calls (x{MANY - FEW}):")
        for name, n in sorted(where.items(), key=lambda kv: -kv[1]):
            if n:
                print(f"{n:>6}  {name}")


if __name__ == "__main__":
    main()
