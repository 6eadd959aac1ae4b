"""Framework overhead of one turn, on the scripted model and the in-memory store.

    python benchmarks/runtime.py

Prints medians of 5 runs:
  * a simple turn on a fresh session (create session + one model reply), microseconds;
  * turns 1-20 vs 181-200 on one session (how the cost grows with history);
  * memory held per one-turn session, over 10,000 sessions (tracemalloc);
with a verdict per aim. Progress goes to stderr. The google-adk column is quoted, not
measured (see ``report.QUOTED``).
Model responses are built before timing: the figures are the runtime's own cost.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable

from google.genai import types
from report import QUOTED, print_table, repeat, verdict

from adk_rx import InMemorySessionService, LlmAgent, LlmResponse, Runner
from adk_rx.testing import ScriptedLlm

RUNS = 5
APP = "bench"


def _runner(replies: int) -> tuple[Runner, InMemorySessionService]:
    llm = ScriptedLlm([LlmResponse.text(f"reply {i}") for i in range(replies)], keep_requests=False)
    agent = LlmAgent(name="bench_agent", model=llm, instruction="Answer briefly.")
    service = InMemorySessionService()
    return Runner(app_name=APP, agent=agent, session_service=service), service


def _message(i: int) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=f"hello {i}")])


def _turn(runner: Runner, session_id: str, message: types.Content, user_id: str = "u") -> None:
    events = runner.run_async(user_id=user_id, session_id=session_id, new_message=message)
    events.subscribe(on_error=_raise)


def _raise(exc: Exception) -> None:
    raise exc


def simple_turn_us(turns: int = 2000) -> float:
    """Median per-turn microseconds: create a session, run one turn."""
    runner, service = _runner(turns)
    messages = [_message(i) for i in range(turns)]
    gc.collect()
    start = time.perf_counter()
    for i in range(turns):
        session = service.create_session(app_name=APP, user_id="u").run()
        _turn(runner, session.id, messages[i])
    return (time.perf_counter() - start) / turns * 1e6


def growth() -> tuple[float, float]:
    """Mean microseconds of turns 1-20 and 181-200 on one session."""
    runner, service = _runner(200)
    session = service.create_session(app_name=APP, user_id="u").run()
    messages = [_message(i) for i in range(200)]
    times: list[float] = []
    for i in range(200):
        start = time.perf_counter()
        _turn(runner, session.id, messages[i])
        times.append(time.perf_counter() - start)
    return statistics.mean(times[:20]) * 1e6, statistics.mean(times[180:]) * 1e6


def memory_per_session(sessions: int = 10_000, with_payload: bool = False) -> float:
    """Bytes held per one-turn session (tracemalloc), after the runs.

    Without ``with_payload`` the user messages and scripted replies exist before the
    measurement (the runtime's own cost); with it they are built inside it (what a service
    holding those conversations pays in all).
    """
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot() if with_payload else None
    llm = ScriptedLlm(
        [LlmResponse.text(f"reply {i}") for i in range(sessions)], keep_requests=False
    )
    messages = [_message(i) for i in range(sessions)]
    agent = LlmAgent(name="bench_agent", model=llm, instruction="Answer briefly.")
    service = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=service)
    if before is None:
        gc.collect()
        before = tracemalloc.take_snapshot()
    for i in range(sessions):
        session = service.create_session(app_name=APP, user_id=f"user{i}").run()
        _turn(runner, session.id, messages[i], f"user{i}")
    llm.requests.clear()  # the scripted model keeps requests for tests; not runtime state
    del messages
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown / sessions


def _median(label: str, fn: Callable[[], float], runs: int = RUNS) -> float:
    return statistics.median(repeat(label, fn, runs))


def main() -> None:
    simple = _median("simple turn", simple_turn_us)
    growth_runs = repeat("turns 1-20 and 181-200 on one session", growth, RUNS)
    early = statistics.median(g[0] for g in growth_runs)
    late = statistics.median(g[1] for g in growth_runs)
    mem = _median("memory per session (10,000 sessions)", memory_per_session, 3)
    mem_payload = _median(
        "memory per session with its payload", lambda: memory_per_session(with_payload=True), 3
    )
    # (measure, median, value for the aim, reference, aim)
    rows = [
        ("simple turn, fresh session", f"{simple:,.0f} us", simple,
         "2,750 us (quoted)", "<= 100 us"),
        ("turns 1-20 on one session", f"{early:,.0f} us", early, "", ""),
        ("turns 181-200 on one session", f"{late:,.0f} us", late, "", ""),
        ("growth 181-200 / 1-20", f"{late / early:.2f}x", late / early, "8x (quoted)", "<= 1.5x"),
        ("memory per one-turn session", f"{mem / 1024:.2f} KiB", mem / 1024,
         "11.5 KiB (quoted)", "<= 3 KiB"),
        ("  with its message and reply", f"{mem_payload / 1024:.2f} KiB", 0.0, "", ""),
    ]  # fmt: skip
    print_table(
        ("measure", "median", "google-adk 2.13", "aim", "verdict"),
        [(name, text, ref, aim, verdict(value, aim)) for name, text, value, ref, aim in rows],
    )
    print(f"(medians of {RUNS} runs; memory: median of 3)")
    print(f"({QUOTED})")


if __name__ == "__main__":
    main()
