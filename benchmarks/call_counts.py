"""Function calls per turn: how much Python a turn runs, which timing noise cannot blur.

    python benchmarks/call_counts.py [--model=scripted|user|thread] [-v]

Counts, with ``sys.setprofile``, every Python and C function call made while one turn runs
through ``Runner.run_async`` (on a fresh in-memory session, subscribed until it completes),
for a text turn and for a tool turn (the model calls ``add``, then answers). The scripted
model's own calls (its functions, and the builtins they call) are not counted: the figure is
the runtime's. The counts are exact and repeat from run to run, after one warm-up turn.

A second table gives what a turn allocates: its peak (tracemalloc), the generation-0
collections the GC runs per 1,000 turns, and what stays held afterwards (a fresh session
with the turn's events).
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

from google.genai import types
from reactivex.scheduler import ThreadPoolScheduler
from user_models import KIND, model  # beside this script (run as a script)

from adk_rx import FunctionTool, InMemorySessionService, LlmAgent, RunConfig, Runner
from adk_rx.models import LlmResponse
from adk_rx.models.base import BaseLlm

# google-adk 2.13, same turns (its tools always run inline)
GOOGLE_ADK = {"text turn": 5_700, "tool turn": 12_300, "inline tool turn": 12_300}
AIMS = {"text turn": 230, "tool turn": 620, "inline tool turn": 620}


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


class _Profiler:
    """A profile function on every thread (installed before any worker thread starts) that
    counts only while ``active`` is set."""

    def __init__(self, fake_files: frozenset[str]) -> None:
        self.fake_files = fake_files
        self.active = False
        self.per_thread: dict[int, int] = {}
        self.where: Counter[str] | None = None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.active:
            return
        if event == "call":
            code = frame.f_code
            if code.co_filename in self.fake_files:
                return
            name = f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_name}"
        elif event == "c_call":
            if frame.f_code.co_filename in self.fake_files:
                return
            name = f"C {getattr(arg, '__qualname__', arg)}"
        else:
            return
        ident = threading.get_ident()
        self.per_thread[ident] = self.per_thread.get(ident, 0) + 1
        if self.where is not None:
            self.where[name] += 1

    def install(self) -> None:
        threading.setprofile(self)
        sys.setprofile(self)

    def remove(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    def count(self, start: Callable[[threading.Event], object], where: Counter[str] | None) -> int:
        """Calls made, on any thread, from ``start(done)`` until ``done`` is set."""
        done = threading.Event()
        self.per_thread = {}
        self.where = where
        self.active = True
        try:
            start(done)
            done.wait(10)
        finally:
            self.active = False
        if not done.is_set():
            raise SystemExit("the turn did not complete")
        return sum(self.per_thread.values())


def _turn(
    runner: Runner,
    service: InMemorySessionService,
    message: types.Content,
    run_config: RunConfig | None = None,
) -> Callable:
    session = service.create_session(app_name="bench", user_id="u").run()

    def start(done: threading.Event) -> None:
        failures: list[Exception] = []

        def failed(exc: Exception) -> None:
            failures.append(exc)
            done.set()

        runner.run_async(
            user_id="u", session_id=session.id, new_message=message, run_config=run_config
        ).subscribe(on_error=failed, on_completed=done.set)

    return start


def _tool_script(turns: int) -> list[object]:
    script: list[object] = []
    for n in range(turns):
        call = types.FunctionCall(name="add", args={"a": n, "b": 1})
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        script += [LlmResponse(content=content), f"the sum is {n + 1}"]
    return script


def _setups() -> list[tuple[str, BaseLlm, list[Any]]]:
    """(label, model, tools) of each turn measured; scripts hold enough replies for 2 turns."""
    return [
        ("text turn", model([LlmResponse.text(f"reply {i}") for i in range(2)]), []),
        ("tool turn", model(_tool_script(2)), [add]),
        ("inline tool turn", model(_tool_script(2)), [FunctionTool(add, blocking=False)]),
    ]


def allocations(turns: int = 1000) -> dict[str, tuple[float, float, float]]:
    """Per turn: peak bytes allocated while it runs (tracemalloc), GC generation-0
    collections per 1,000 turns, and bytes still held after it (its session's events)."""
    import gc
    import tracemalloc

    found: dict[str, tuple[float, float, float]] = {}
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    for label, _llm, tools in _setups():
        script = _tool_script(turns + 1) if tools else [f"reply {i}" for i in range(turns + 1)]
        agent = LlmAgent(name="bench_agent", model=model(script), tools=tools)
        service = InMemorySessionService()
        runner = Runner(app_name="bench", agent=agent, session_service=service)
        warm = threading.Event()
        _turn(runner, service, message)(warm)
        warm.wait(10)
        starts = [_turn(runner, service, message) for _ in range(turns)]
        gc.collect()
        collections = gc.get_stats()[0]["collections"]
        tracemalloc.start()
        peaks: list[int] = []
        held = tracemalloc.get_traced_memory()[0]
        for start in starts:
            tracemalloc.reset_peak()
            current = tracemalloc.get_traced_memory()[0]
            done = threading.Event()
            start(done)
            done.wait(10)
            peaks.append(tracemalloc.get_traced_memory()[1] - current)
        held = tracemalloc.get_traced_memory()[0] - held
        tracemalloc.stop()
        collected = gc.get_stats()[0]["collections"] - collections
        peaks.sort()
        found[label] = (peaks[len(peaks) // 2], collected * 1000 / turns, held / turns)
    return found


def counts(
    where: dict[str, Counter[str]] | None = None, run_config: RunConfig | None = None
) -> dict[str, int]:
    """Calls per text turn and per tool turn (each after one warm-up turn), run with
    ``run_config`` (None: the default)."""
    import user_models

    import adk_rx.testing.scripted as scripted

    fake = frozenset({scripted.__file__, user_models.__file__})
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    result: dict[str, int] = {}
    profiler = _Profiler(fake)
    profiler.install()  # before the pools below start their threads
    for label, llm, tools in _setups():
        agent = LlmAgent(name="bench_agent", model=llm, instruction="Answer.", tools=tools)
        service = InMemorySessionService()
        # A pool of its own, started while counting, so its thread is counted too.
        pool = ThreadPoolScheduler(1)
        runner = Runner(app_name="bench", agent=agent, session_service=service, io_scheduler=pool)
        warm = threading.Event()
        _turn(runner, service, message, run_config)(warm)  # warm-up: lazy imports and caches
        warm.wait(10)
        counter: Counter[str] | None = Counter() if where is not None else None
        result[label] = profiler.count(_turn(runner, service, message, run_config), counter)
        if where is not None and counter is not None:
            where[label] = counter
    profiler.remove()
    return result


def main() -> None:
    verbose = "-v" in sys.argv
    where: dict[str, Counter[str]] | None = {} if verbose else None
    found = counts(where)
    print(f"(adk_rx with the {KIND} model)")
    print(f"{'calls per turn':<18}{'adk_rx':>8}{'google-adk 2.13':>17}{'aim':>7}")
    for label, n in found.items():
        print(f"{label:<18}{n:>8,}{GOOGLE_ADK[label]:>17,}{AIMS[label]:>7,}")
    header = f"{'peak KiB/turn':>14}{'gen-0 GCs/1k turns':>20}{'held KiB/turn':>15}"
    print(f"\n{'allocations':<18}{header}")
    for label, (peak, collected, held) in allocations().items():
        print(f"{label:<18}{peak / 1024:>14.1f}{collected:>20.0f}{held / 1024:>15.2f}")
    if where is not None:
        for label, counter in where.items():
            print(f"\n{label}: most frequent")
            for name, n in counter.most_common(40):
                print(f"{n:>6}  {name}")


if __name__ == "__main__":
    main()
