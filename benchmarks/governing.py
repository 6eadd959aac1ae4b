"""Governing a run: what a bulkhead and the budget checks cost, and a bulkhead under 100 calls.

    .venv/bin/python benchmarks/governing.py [--turns 2000]

Three figures, each the median of 5 runs:

1. ``Bulkhead(1)`` over 100 calls subscribed at once, each running 1 ms on a pool thread: the
   most calls seen running together (aim: 1), whether all completed, whether they started in
   the order they were subscribed (first come, first served), and the wall time against the
   100 ms the calls need one after another.
2. What passing a synchronous source through a bulkhead adds per subscription (us).
3. The turns of ``benchmarks/call_counts.py`` with every budget set but never reached
   (``max_tool_calls``, ``max_tokens``): the function calls they make against the same turns
   without limits (exact, whatever the load; aim: within +2%).
4. A tool turn (the model calls ``add``, then answers) through ``Runner.run_async`` without
   limits and with every budget set: microseconds per turn and the ratio, alternated. On a
   busy machine this ratio swings by more than the checks cost; trust figure 3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler
from report import print_table, progress, repeat, verdict

from adk_rx import InMemorySessionService, LlmAgent, RunConfig, Runner
from adk_rx.models import LlmResponse
from adk_rx.rx import Bulkhead
from adk_rx.testing import ScriptedLlm

RUNS = 5


def bulkhead_under_load(calls: int = 100, hold: float = 0.001) -> tuple[int, bool, bool, float]:
    """(most at once, all completed, FIFO, wall ms) for ``calls`` calls through Bulkhead(1)."""
    pool = ThreadPoolScheduler(8)
    bulkhead = Bulkhead(1)
    lock = threading.Lock()
    inside, most = [0], [0]
    started: list[int] = []
    done = threading.Semaphore(0)

    def work(n: int) -> int:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            started.append(n)
        time.sleep(hold)
        with lock:
            inside[0] -= 1
        return n

    begin = time.perf_counter()
    for n in range(calls):
        source = rx.from_callable(lambda n=n: work(n), scheduler=pool)
        source.pipe(bulkhead).subscribe(on_completed=done.release)
    completed = all(done.acquire(timeout=30) for _ in range(calls))
    wall = (time.perf_counter() - begin) * 1000
    pool.executor.shutdown(wait=True)
    return most[0], completed, started == list(range(calls)), wall


def bulkhead_overhead(n: int = 20_000) -> float:
    """Microseconds a bulkhead adds to one subscription of a synchronous source."""
    source = rx.of(1)
    bulkhead = Bulkhead(4)
    guarded = source.pipe(bulkhead)

    def per_call(observable: rx.Observable[Any]) -> float:
        begin = time.perf_counter()
        for _ in range(n):
            observable.subscribe()
        return (time.perf_counter() - begin) / n * 1e6

    return per_call(guarded) - per_call(source)


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def tool_turns(turns: int, config: RunConfig) -> float:
    """Microseconds per tool turn under ``config``."""
    script: list[Any] = []
    for n in range(turns):
        call = types.FunctionCall(name="add", args={"a": n, "b": 1})
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        script += [LlmResponse(content=content), f"the sum is {n + 1}"]
    service = InMemorySessionService()
    agent = LlmAgent(name="calc", model=ScriptedLlm(script, keep_requests=False), tools=[add])
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    for n in range(turns):
        service.create_session(app_name="bench", user_id="u", session_id=f"s{n}").run()
    begin = time.perf_counter()
    for n in range(turns):
        runner.run_async(
            user_id="u", session_id=f"s{n}", new_message="add", run_config=config
        ).pipe(ops.count()).run()
    return (time.perf_counter() - begin) / turns * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    turns = parser.parse_args().turns

    loads = repeat("bulkhead(1) over 100 calls", bulkhead_under_load, RUNS)
    most = max(r[0] for r in loads)
    all_done = all(r[1] for r in loads)
    fifo = all(r[2] for r in loads)
    wall = statistics.median(r[3] for r in loads)
    overhead = statistics.median(repeat("bulkhead overhead", bulkhead_overhead, RUNS))
    plain = RunConfig()
    limited = RunConfig(max_tool_calls=10**6, max_tokens=10**9, max_llm_calls=10**6)
    tool_turns(200, plain)  # warm-up
    tool_turns(200, limited)
    # Alternated (ABBA), so a change in the machine's load or the heap falls on both alike.
    order = iter(range(RUNS))

    def pair() -> tuple[float, float]:
        if next(order) % 2 == 0:
            first = tool_turns(turns, plain)
            return first, tool_turns(turns, limited)
        second = tool_turns(turns, limited)
        return tool_turns(turns, plain), second

    pairs = repeat("tool turns, without and with budgets", pair, RUNS)
    free = statistics.median(p[0] for p in pairs)
    checked = statistics.median(p[1] for p in pairs)
    progress("call counts, without and with budgets")
    import call_counts

    plain_calls = call_counts.counts()
    budget_calls = call_counts.counts(run_config=limited)
    progress("done")
    ratio = checked / free
    print_table(
        ["figure", "value", "aim", ""],
        [
            ["bulkhead(1), 100 calls: most at once", str(most), "<= 1", verdict(most, "<= 1")],
            ["bulkhead(1), 100 calls: all completed", str(all_done), "True", ""],
            ["bulkhead(1), 100 calls: first come first served", str(fifo), "True", ""],
            ["bulkhead(1), 100 x 1 ms calls: wall ms", f"{wall:.0f}", "(>= 100)", ""],
            ["bulkhead added per subscription (us)", f"{overhead:.2f}", "", ""],
            *[
                [
                    f"{label}: calls, every budget set vs none",
                    f"{budget_calls[label]:,} vs {plain_calls[label]:,} "
                    f"({budget_calls[label] / plain_calls[label] - 1:+.1%})",
                    "<= +2%",
                    verdict(budget_calls[label] / plain_calls[label], "<= 1.02"),
                ]
                for label in plain_calls
            ],
            ["tool turn, no limits (us)", f"{free:.0f}", "", ""],
            ["tool turn, every budget set (us)", f"{checked:.0f}", "", ""],
            ["ratio (timed, noisy under load)", f"{ratio:.3f}x", "", ""],
        ],
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
