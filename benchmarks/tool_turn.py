"""Tool-turn benchmark: microseconds per turn in which the model calls a tool, then answers.

Each turn goes through ``Runner.run_async`` with an InMemorySessionService and a ScriptedLlm:
the model calls ``add(a: int, b: int)``, the tool runs, the model answers with text. The
script and the sessions are built before the clock starts. Prints the median over 5 runs.

    .venv/bin/python benchmarks/tool_turn.py [--turns 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from google.genai import types
from reactivex import operators as ops
from report import QUOTED, progress, repeat

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm

RUNS = 5
GOOGLE_ADK_US = 4863  # quoted (report.QUOTED): google-adk 2.13, same turn, not measured here


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def _script(turns: int) -> list[object]:
    script: list[object] = []
    for n in range(turns):
        call = types.FunctionCall(name="add", args={"a": n, "b": 1})
        content = types.Content(role="model", parts=[types.Part(function_call=call)])
        script += [LlmResponse(content=content), f"the sum is {n + 1}"]
    return script


def one_run(turns: int) -> tuple[float, float]:
    """(wall, CPU) microseconds per tool turn over ``turns`` turns, each on a fresh session."""
    llm = ScriptedLlm(_script(turns))
    agent = LlmAgent(name="calculator", model=llm, instruction="Add numbers.", tools=[add])
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    for n in range(turns):
        service.create_session(app_name="bench", user_id="u", session_id=f"s{n}").run()
    message = types.Content(role="user", parts=[types.Part(text="add please")])
    start, cpu = time.perf_counter(), time.process_time()
    for n in range(turns):
        events = (
            runner.run_async(user_id="u", session_id=f"s{n}", new_message=message)
            .pipe(ops.to_list())
            .run()
        )
        if len(events) != 3:
            raise SystemExit(f"expected 3 events per turn, got {events}")
    wall = (time.perf_counter() - start) / turns * 1e6
    return wall, (time.process_time() - cpu) / turns * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="tool turns per run")
    args = parser.parse_args()
    progress("warm-up")
    one_run(min(args.turns, 200))  # warm-up: imports, schedulers, caches
    results = repeat(f"{args.turns} tool turns", lambda: one_run(args.turns), RUNS)
    print(f"{'tool turn (add, then text)':<32}{'median':>10}{'min':>10}{'max':>10}")
    for label, values in (
        ("wall us/turn", [w for w, _ in results]),
        ("CPU us/turn (all threads)", [c for _, c in results]),
    ):
        row = f"{statistics.median(values):>10.0f}{min(values):>10.0f}{max(values):>10.0f}"
        print(f"  {label:<30}{row}")
    print(f"  {'google-adk 2.13 wall us/turn':<30}{GOOGLE_ADK_US:>10}  (quoted, not measured)")
    print(f"({QUOTED})")


if __name__ == "__main__":
    main()
