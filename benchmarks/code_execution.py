"""One code run, start to result: what each executor costs per run (p50, p90).

``print(6 * 7)`` is run through ``execute_code`` (the executor alone, no model) by:
adk_rx's UnsafeLocalCodeExecutor (a fresh interpreter per run), its SandboxedCodeExecutor
(the same plus rlimits, a scrubbed environment and, where the machine allows one, a network
namespace), both of them ``stateful=True`` (one interpreter kept for the session: the run is a
message to it), and google-adk 2.13's UnsafeLocalCodeExecutor, measured in the same run. A
fresh interpreter's start dominates the one-shot figures; the stateful ones show what the
loop itself adds. No aim was set by the issue; the figures are for choosing an executor.

    .venv/bin/python benchmarks/code_execution.py [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from google.adk.code_executors import UnsafeLocalCodeExecutor as AdkUnsafeLocalCodeExecutor
from google.adk.code_executors.code_execution_utils import (
    CodeExecutionInput as AdkCodeExecutionInput,
)
from report import print_table, progress

from adk_rx import InMemorySessionService, InvocationContext, LlmAgent
from adk_rx.code_executors import (
    BaseCodeExecutor,
    CodeExecutionInput,
    SandboxedCodeExecutor,
    UnsafeLocalCodeExecutor,
)
from adk_rx.code_executors.isolation import network_isolation
from adk_rx.services import InvocationServices
from adk_rx.testing import ScriptedLlm

CODE = "print(6 * 7)"
WARMUP = 3


def _context() -> InvocationContext:
    service = InMemorySessionService()
    session = service.create_session(app_name="bench", user_id="u").run()
    agent = LlmAgent(name="bench", model=ScriptedLlm([]))
    return InvocationContext(
        session=session, agent=agent, services=InvocationServices(session_service=service)
    )


def _ours(executor: BaseCodeExecutor) -> Callable[[], str]:
    ctx = _context()
    code_input = CodeExecutionInput(CODE, (), "bench-session")
    return lambda: executor.execute_code(ctx, code_input).run().stdout


def _google_adk() -> Callable[[], str]:
    executor = AdkUnsafeLocalCodeExecutor(timeout_seconds=30)
    return lambda: executor.execute_code(None, AdkCodeExecutionInput(code=CODE)).stdout  # type: ignore[arg-type]


def _measure(label: str, run: Callable[[], str], runs: int) -> list[float]:
    progress(f"{label}: {runs} runs")
    for _ in range(WARMUP):
        assert run() == "42\n"
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - start) * 1000)
        assert out == "42\n", out
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description="one code run per executor, p50 and p90")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    isolated = network_isolation()[0] is not None
    sandbox = {"network": not isolated, "timeout": 30}
    executors: list[tuple[str, BaseCodeExecutor | None]] = [
        ("adk_rx UnsafeLocal", UnsafeLocalCodeExecutor(timeout=30)),
        ("adk_rx Sandboxed", SandboxedCodeExecutor(**sandbox)),
        ("adk_rx UnsafeLocal stateful", UnsafeLocalCodeExecutor(timeout=30, stateful=True)),
        ("adk_rx Sandboxed stateful", SandboxedCodeExecutor(stateful=True, **sandbox)),
        ("google-adk UnsafeLocal", None),
    ]
    rows: list[list[str]] = []
    try:
        for label, executor in executors:
            run = _google_adk() if executor is None else _ours(executor)
            times = sorted(_measure(label, run, args.runs))
            p90 = times[int(len(times) * 0.9) - 1]
            rows.append([label, f"{statistics.median(times):.1f}", f"{p90:.1f}"])
    finally:
        for _, executor in executors:
            if executor is not None:
                executor.close()
    print_table(["executor (one run of print(6 * 7))", "p50 ms", "p90 ms"], rows)
    print(f"sandbox network namespace: {'yes' if isolated else 'no (network=True)'}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
