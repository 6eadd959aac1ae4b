"""api-server replicas over PostgreSQL and Redis: throughput and the broker's time-to-first-event.

Starts real ``adk-rx api-server`` processes on one PostgreSQL schema and one Redis key prefix,
and through 1, 2 and 3 of them (with the broker) runs TURNS invocations, CONCURRENCY at a
time: each is started on replica ``i`` and streamed (``.../invocations/{id}/events``) from
replica ``i + 1``, so every event but on a single replica crosses Redis. Prints invocations/s
and SSE events/s. The single-process figures (one server, no broker, on the same database)
are printed beside them.

CPU: for each configuration, the CPU time the server processes, PostgreSQL and Redis used
(when they run on this machine), per invocation and per event: the per-event costs that
``docs/deployment.md`` sizes a deployment from.

Time to first event: one invocation at a time, the time from the start request to the first
event frame at a reader, median of FIRST runs: single process (reader on the same server, no
broker) against two replicas (reader on the other one, through Redis).

Needs ``ADK_RX_BENCH_POSTGRES_URL`` (or ``ADK_RX_TEST_POSTGRES_URL``) and
``ADK_RX_BENCH_REDIS_URL`` (or ``ADK_RX_TEST_REDIS_URL``). Run from the repository root:
``PYTHONPATH=. python benchmarks/server_replicas.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from tests.cli.server.redis_support import key_prefix
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import unique_app, user_text, write_agents
from tests.sessions.postgres import scratch_schema

TURNS = 60
CONCURRENCY = 6
FIRST = 15
MESSAGE = "slow 20 0.001"  # 20 streamed chunks and the final reply: 21 events


def _cpu(pid: int) -> float:
    """Seconds of CPU process ``pid`` has used (all its threads); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pids_named(*names: str) -> list[int]:
    """The local processes whose command is one of ``names`` (the database, Redis)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class _Cpu:
    """CPU seconds used between two points by the servers, PostgreSQL and Redis (when they
    run on this machine)."""

    def __init__(self, servers: list[ServerProcess]) -> None:
        self.groups = {
            "servers": [s.process.pid for s in servers],
            "postgres": _pids_named("postgres"),
            "redis": _pids_named("redis-server"),
        }
        self.start = self._now()

    def _now(self) -> dict[str, float]:
        return {name: sum(map(_cpu, pids)) for name, pids in self.groups.items()}

    def used(self) -> dict[str, float]:
        now = self._now()
        return {name: now[name] - self.start[name] for name in now}


def _env(*names: str) -> str:
    """The first of ``names`` that is set (copied to the last one, which the helpers read)."""
    for name in names:
        if os.environ.get(name):
            os.environ.setdefault(names[-1], os.environ[name])
            return os.environ[name]
    sys.exit(f"set {names[0]} (see the module docstring)")


async def _stream(http: httpx.AsyncClient, url: str, t0: float) -> tuple[int, float]:
    """Events read until the end frame, and the time of the first one since ``t0``."""
    events, first = 0, 0.0
    async with http.stream("GET", url) as response:
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                events += 1
                if events == 1:
                    first = time.perf_counter() - t0
            elif line == "event: end":
                break
    return events, first


async def _turn(
    http: httpx.AsyncClient, start: ServerProcess, read: ServerProcess, app: str
) -> tuple[int, float]:
    base = f"/apps/{app}/users/u1/sessions"
    session = (await http.post(start.url + base, json={})).json()["id"]
    t0 = time.perf_counter()
    reply = await http.post(
        f"{start.url}{base}/{session}/invocations", json={"new_message": user_text(MESSAGE)}
    )
    iid = reply.json()["invocation_id"]
    return await _stream(http, f"{read.url}{base}/{session}/invocations/{iid}/events", t0)


async def _throughput(servers: list[ServerProcess], app: str) -> tuple[float, float, str]:
    gate = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(timeout=60) as http:

        async def one(i: int) -> int:
            async with gate:
                a, b = servers[i % len(servers)], servers[(i + 1) % len(servers)]
                return (await _turn(http, a, b, app))[0]

        await one(0)  # warm-up: the app is imported on first use
        for i in range(1, len(servers)):
            await one(i)
        cpu = _Cpu(servers)
        t0 = time.perf_counter()
        counts = await asyncio.gather(*(one(i) for i in range(TURNS)))
        wall = time.perf_counter() - t0
        used = cpu.used()
    events = sum(counts)
    costs = ", ".join(
        f"{name} {seconds * 1000 / TURNS:.1f} ms/turn {seconds * 1e6 / events:.0f} us/event"
        for name, seconds in used.items()
    )
    return TURNS / wall, events / wall, costs


async def _first_event(servers: list[ServerProcess], app: str) -> float:
    async with httpx.AsyncClient(timeout=60) as http:
        a, b = servers[0], servers[-1]
        await _turn(http, a, b, app)
        firsts = [(await _turn(http, a, b, app))[1] for _ in range(FIRST)]
    return statistics.median(firsts) * 1000


def main() -> None:
    _env("ADK_RX_BENCH_POSTGRES_URL", "ADK_RX_TEST_POSTGRES_URL")  # the helpers read the second
    redis = _env("ADK_RX_BENCH_REDIS_URL", "ADK_RX_TEST_REDIS_URL")
    work = Path(tempfile.mkdtemp(prefix="adk_rx_replicas_"))
    app = unique_app("bench")
    agents = write_agents(work / "agents", app)
    print(f"{TURNS} invocations of {MESSAGE!r}, {CONCURRENCY} at a time; 2 cores shared")
    first = 0.0
    with scratch_schema() as database:
        with api_server_process(agents, work, "--session-service-uri", database) as single:
            solo_rate, solo_events, solo_costs = asyncio.run(_throughput([single], app))
            solo_first = asyncio.run(_first_event([single], app))
        print(
            f"single process, no broker: {solo_rate:7.1f} invocations/s {solo_events:8.0f} events/s"
        )
        print(f"    CPU: {solo_costs}")
        for count in (1, 2, 3):
            with key_prefix() as prefix, ExitStack() as stack:
                options = ("--session-service-uri", database, "--broker-url", redis)
                env = {"ADK_RX_BROKER_PREFIX": prefix}
                servers = [
                    stack.enter_context(api_server_process(agents, work, *options, env=env))
                    for _ in range(count)
                ]
                rate, events, costs = asyncio.run(_throughput(servers, app))
                figures = f"{rate:7.1f} invocations/s {events:8.0f} events/s"
                print(f"{count} replica(s) + Redis:    {figures}  ({rate / solo_rate:.2f}x single)")
                print(f"    CPU: {costs}")
                if count == 2:
                    first = asyncio.run(_first_event(servers, app))
    print(
        f"time to first event (median of {FIRST}): single process {solo_first:.1f} ms, "
        f"read on another replica through Redis {first:.1f} ms (+{first - solo_first:.1f} ms)"
    )


if __name__ == "__main__":
    main()
