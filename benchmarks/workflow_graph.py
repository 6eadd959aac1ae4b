"""A 20-node fan-out/join graph of no-op function nodes, on adk_rx and on google-adk.

``START -> n0..n19 (fan-out) -> JoinNode -> done``: each run is one invocation on a fresh
in-memory session, the graph built once. ``compare.py`` prints the median microseconds per
run of each side; ``python benchmarks/workflow_graph.py`` prints them alone.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from google.genai import types

from adk_rx import InMemorySessionService, Runner
from adk_rx.workflow import START, JoinNode, Workflow

WIDTH = 20
RUNS_PER_SAMPLE = 50 if "--quick" in sys.argv else 200


def _noop(i: int) -> Callable[..., Any]:
    def nop(node_input: Any) -> int:
        return i

    nop.__name__ = f"n{i}"
    return nop


def _done(node_input: Any) -> int:
    return len(node_input)


def _message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text="go")])


def rx_graph(runs: int = RUNS_PER_SAMPLE) -> float:
    """Microseconds per run of the graph on adk_rx."""
    nodes = tuple(_noop(i) for i in range(WIDTH))
    workflow = Workflow(name="graph", edges=[(START, nodes, JoinNode(name="join"), _done)])
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=workflow, session_service=service)
    ids = [service.create_session(app_name="bench", user_id="u").run().id for _ in range(runs)]
    message = _message()
    done = threading.Event()
    failed: list[Exception] = []
    gc.collect()
    start = time.perf_counter()
    for sid in ids:  # subscribed and waited for, as compare.py's other adk_rx workloads
        done.clear()
        runner.run_async(user_id="u", session_id=sid, new_message=message).subscribe(
            on_error=lambda e: (failed.append(e), done.set()), on_completed=done.set
        )
        done.wait(10)
    if failed:
        raise failed[0]
    return (time.perf_counter() - start) / runs * 1e6


def gadk_graph(runs: int = RUNS_PER_SAMPLE) -> float:
    """Microseconds per run of the same graph on google-adk 2.13."""
    from google.adk.runners import Runner as GRunner
    from google.adk.sessions import InMemorySessionService as GSessions
    from google.adk.workflow import START as GSTART
    from google.adk.workflow import JoinNode as GJoinNode
    from google.adk.workflow import Workflow as GWorkflow

    nodes = tuple(_noop(i) for i in range(WIDTH))
    workflow = GWorkflow(name="graph", edges=[(GSTART, nodes, GJoinNode(name="join"), _done)])
    sessions = GSessions()
    runner = GRunner(app_name="bench", node=workflow, session_service=sessions)

    async def run() -> float:
        ids = [
            (await sessions.create_session(app_name="bench", user_id="u")).id for _ in range(runs)
        ]
        message = _message()
        gc.collect()
        start = time.perf_counter()
        for sid in ids:
            async for _ in runner.run_async(user_id="u", session_id=sid, new_message=message):
                pass
        return (time.perf_counter() - start) / runs * 1e6

    return asyncio.run(run())


def main() -> None:
    rx = statistics.median(rx_graph() for _ in range(5))
    print(f"adk_rx      {WIDTH}-node fan-out/join graph: {rx:,.1f} us per run")
    try:
        import google.adk  # noqa: F401
    except ImportError:
        print("google-adk is not installed (pip install -e '.[bench]')")
        return
    theirs = statistics.median(gadk_graph() for _ in range(5))
    print(f"google-adk  {WIDTH}-node fan-out/join graph: {theirs:,.1f} us per run")
    print(f"ratio {theirs / rx:.1f}x (aim >= 10x)")


if __name__ == "__main__":
    main()
