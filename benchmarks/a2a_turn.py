"""A remote turn through A2A on loopback vs the same turn in process: the p50 it adds.

The remote agent (an LlmAgent whose model answers at once) is served by ``to_a2a`` under
uvicorn in a process of its own on 127.0.0.1; the caller's root agent is a
``RemoteA2aAgent`` for it. The same LlmAgent run in process is the baseline. Each turn is a
new session (a new remote context), through ``Runner.run_async`` on in-memory sessions;
the remote turn streams (``message/stream``), as RemoteA2aAgent always asks.

Each is measured twice: with the caller blocking on the turn (``.run()``: the remote call
runs on adk_rx's background loop, a thread hop each way) and with the caller awaiting it on
its own asyncio loop (the remote call runs on that loop). Aim (issue 31): the remote turn
adds <= 5 ms p50.

    .venv/bin/python benchmarks/a2a_turn.py [--turns 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from reactivex import operators as ops
from report import print_table, progress, verdict

from adk_rx import InMemoryRunner, LlmAgent, Runner
from adk_rx.a2a import RemoteA2aAgent
from adk_rx.rx._engine.awaitable import awaitable
from adk_rx.testing import ScriptedLlm

AIM = "<= 5"
WARMUP = 30


def helper() -> LlmAgent:
    """The agent both sides run: its model answers at once, every turn."""
    return LlmAgent(name="helper", model=ScriptedLlm(["the answer"] * 100_000), instruction="x")


def serve(port: int) -> None:
    """The remote side (``--serve PORT``): the helper over A2A until killed."""
    import uvicorn

    from adk_rx.a2a import to_a2a

    uvicorn.run(to_a2a(helper(), port=port), host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/.well-known/agent-card.json").status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)  # the process is starting; nothing to observe but the port
    raise RuntimeError("the A2A server did not start")


def latencies(runner: Runner, turns: int) -> list[float]:
    """Milliseconds per turn, each on a new session, after a warm-up; the caller blocks."""
    out: list[float] = []
    service = runner.session_service
    for n in range(WARMUP + turns):
        sid = service.create_session(app_name=runner.app_name, user_id="u").run().id
        started = time.perf_counter()
        runner.run_async(user_id="u", session_id=sid, new_message=f"turn {n}").pipe(
            ops.to_list()
        ).run()
        if n >= WARMUP:
            out.append((time.perf_counter() - started) * 1000)
    return out


def latencies_awaited(runner: Runner, turns: int) -> list[float]:
    """The same, the caller awaiting on its own asyncio loop (the remote call runs there)."""

    async def measure() -> list[float]:
        out: list[float] = []
        service = runner.session_service
        for n in range(WARMUP + turns):
            sid = (await service.create_session(app_name=runner.app_name, user_id="u")).id
            started = time.perf_counter()
            await awaitable(
                runner.run_async(user_id="u", session_id=sid, new_message=f"turn {n}").pipe(
                    ops.to_list()
                )
            )
            if n >= WARMUP:
                out.append((time.perf_counter() - started) * 1000)
        return out

    return asyncio.run(measure())


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent.parent), "."])}
    remote = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], env=env, cwd=Path(__file__).parent
    )
    try:
        _wait_for(url, remote)
        rows: dict[str, list[float]] = {}
        for how, measure in (("blocking", latencies), ("awaiting", latencies_awaited)):
            progress(f"in process, caller {how}: {args.turns} turns")
            runner = InMemoryRunner(agent=helper(), app_name="bench")
            rows[f"in process, caller {how}"] = measure(runner, args.turns)
            progress(f"through A2A on loopback, caller {how}: {args.turns} turns")
            caller = RemoteA2aAgent(name="remote", agent_card=url)
            runner = InMemoryRunner(agent=caller, app_name="bench")
            rows[f"through A2A, caller {how}"] = measure(runner, args.turns)
    finally:
        remote.terminate()
        remote.wait(15)
    print_table(
        ["turn", "p50 ms", "p90 ms"],
        [[name, f"{statistics.median(v):.2f}", f"{p(v, 90):.2f}"] for name, v in rows.items()],
    )
    for how in ("blocking", "awaiting"):
        added = statistics.median(rows[f"through A2A, caller {how}"]) - statistics.median(
            rows[f"in process, caller {how}"]
        )
        print(f"added p50, caller {how}: {added:.2f} ms (aim {AIM} ms: {verdict(added, AIM)})")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
