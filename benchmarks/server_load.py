"""The API server under load: concurrent sessions, SSE drops and reattaches, per store.

    python benchmarks/server_load.py [--sessions 200] [--turns 1]

Starts ``adk-rx``'s server in a subprocess on 127.0.0.1 (a free port) over a scripted agent
whose turns stream 20 chunks, 10 ms apart, and drives it from this process: SESSIONS
sessions at once, each running TURNS turns one after the other through the invocations
routes. Every fourth client drops its SSE stream after a few events and reattaches with
``after=`` its last cursor. Checked per turn: every cursor 1..21 seen exactly once and an
``end`` frame with ``completed``; anything else (or a non-2xx answer) counts as an error.

Printed per store (SQLite in a temporary folder; PostgreSQL when
``ADK_RX_TEST_POSTGRES_URL`` is set, in a schema of its own, dropped afterwards): runs/s,
p50 / p99 of a turn's wall time (start request to ``end`` frame), errors, drops and
reattaches, and the server's peak memory. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
CHUNKS = 20
PERIOD = 0.01

AGENT = textwrap.dedent("""
    import reactivex as rx
    from google.genai import types
    from reactivex import operators as ops

    from adk_rx import LlmAgent
    from adk_rx.models import LlmResponse
    from adk_rx.models.llm_response import model_content
    from adk_rx.rx import timer_scheduler
    from adk_rx.testing import ScriptedLlm


    def text(value, **flags):
        return LlmResponse(content=model_content(types.Part(text=value)), **flags)


    def respond(request):
        count, period = 20, 0.01
        chunks = rx.interval(period, scheduler=timer_scheduler()).pipe(
            ops.take(count), ops.map(lambda i: text(f"tok{i} ", partial=True))
        )
        whole = "".join(f"tok{i} " for i in range(count))
        return rx.concat(chunks, rx.just(text(whole, turn_complete=True)))


    root_agent = LlmAgent(name="bench", model=ScriptedLlm([respond] * 1_000_000))
""")

SERVER = textwrap.dedent("""
    import socket, sys
    import uvicorn
    from adk_rx import SqlSessionService
    from adk_rx.cli.server import Limits, create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(sock.getsockname()[1], flush=True)
    sessions = SqlSessionService(sys.argv[2])
    app = create_app(sys.argv[1], session_service=sessions, limits=Limits(max_running=1024))
    uvicorn.Server(uvicorn.Config(app, log_level="warning", backlog=2048)).run(sockets=[sock])
""")


@dataclass
class Figures:
    """What the clients saw."""

    seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    drops: int = 0
    reattaches: int = 0


@contextmanager
def server(agents: Path, url: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(agents), url],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
        cwd=agents.parent,
    )
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{int(process.stdout.readline())}", process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


async def read_stream(
    http: httpx.AsyncClient, url: str, after: int, seen: list[int], stop_after: int | None
) -> dict | None:
    """Reads frames into ``seen``; the end frame's data, or None when it dropped on purpose."""
    buffer = b""
    async with http.stream("GET", url, params={"after": after}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"events answered {response.status_code}")
        async for chunk in response.aiter_raw():
            buffer += chunk
            *frames, buffer = buffer.split(b"\n\n")
            for frame in frames:
                if frame.startswith(b"id: "):
                    seen.append(int(frame[4 : frame.index(b"\n")]))
                    if stop_after is not None and len(seen) >= stop_after:
                        return None  # leaving the block closes the connection mid-stream
                elif frame.startswith(b"event: end"):
                    return json.loads(frame.split(b"data: ", 1)[1])
    raise RuntimeError("the stream ended without an end frame")


async def client(
    http: httpx.AsyncClient, app: str, index: int, turns: int, figures: Figures
) -> None:
    base = f"/apps/{app}/users/u{index}/sessions/s{index}"
    created = await http.post(
        f"/apps/{app}/users/u{index}/sessions", json={"session_id": f"s{index}"}
    )
    if created.status_code != 200:
        figures.errors.append(f"create {created.status_code}")
        return
    drops = index % 4 == 0
    for _ in range(turns):
        t0 = time.perf_counter()
        try:
            started = await http.post(
                f"{base}/invocations",
                json={
                    "new_message": {"role": "user", "parts": [{"text": "go"}]},
                    "streaming": True,
                },
            )
            if started.status_code != 202:
                figures.errors.append(f"start {started.status_code}: {started.text[:80]}")
                continue
            url = f"{base}/invocations/{started.json()['invocation_id']}/events"
            seen: list[int] = []
            end = await read_stream(http, url, 0, seen, 5 if drops else None)
            if end is None:
                figures.drops += 1
                figures.reattaches += 1
                end = await read_stream(http, url, seen[-1], seen, None)
            if seen != list(range(1, CHUNKS + 2)) or end is None or end["status"] != "completed":
                figures.errors.append(f"cursors {seen[:3]}..{seen[-3:]} end {end}")
                continue
            figures.seconds.append(time.perf_counter() - t0)
        except (httpx.HTTPError, RuntimeError) as exc:
            figures.errors.append(
                f"{type(exc).__name__}: {exc!r} ({'reattach' if figures.drops else 'first read'})"
            )


async def drive(url: str, app: str, sessions: int, turns: int) -> tuple[Figures, float]:
    figures = Figures()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http, app, i, turns, figures) for i in range(sessions)))
        return figures, time.perf_counter() - t0


def report(store: str, figures: Figures, wall: float, peak: float | None, runs: int) -> None:
    times = sorted(figures.seconds)
    p50 = statistics.median(times) * 1000 if times else float("nan")
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000 if times else float("nan")
    print(
        f"{store:<11} {runs:>5} {len(times) / wall:>7.1f} {p50:>8.0f} {p99:>8.0f} "
        f"{len(figures.errors):>6} {figures.drops:>6} {figures.reattaches:>6} "
        f"{peak if peak is not None else float('nan'):>8.0f}"
    )
    for error in figures.errors[:5]:
        print(f"    error: {error}")


@contextmanager
def postgres_schema(server_url: str) -> Iterator[str]:
    from adk_rx.sessions.sql_engine import normalize_url

    url = normalize_url(server_url)
    schema = f"adk_rx_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(url, poolclass=sa.pool.NullPool)
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        scoped = url.update_query_dict({"options": f"-csearch_path={schema}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="adk_rx_server_load_") as tmp:
        root = Path(tmp)
        app = f"load_{uuid.uuid4().hex[:6]}"
        (root / "agents" / app).mkdir(parents=True)
        (root / "agents" / app / "agent.py").write_text(AGENT)
        stores = [("sqlite", f"sqlite:///{root / 'sessions.db'}")]
        pg = os.environ.get("ADK_RX_TEST_POSTGRES_URL", "").strip()
        print(
            f"{args.sessions} concurrent sessions x {args.turns} turns, {CHUNKS} chunks "
            f"{PERIOD * 1000:.0f} ms apart per turn; every 4th client drops and reattaches"
        )
        print(
            f"{'store':<11} {'runs':>5} {'runs/s':>7} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'errors':>6} {'drops':>6} {'reatt.':>6} {'peak MB':>8}"
        )
        for store, url in stores:
            with server(root / "agents", url) as (base, process):
                figures, wall = asyncio.run(drive(base, app, args.sessions, args.turns))
                report(store, figures, wall, peak_rss_mb(process.pid), args.sessions * args.turns)
        if pg:
            with postgres_schema(pg) as url, server(root / "agents", url) as (base, process):
                figures, wall = asyncio.run(drive(base, app, args.sessions, args.turns))
                report(
                    "postgresql",
                    figures,
                    wall,
                    peak_rss_mb(process.pid),
                    args.sessions * args.turns,
                )
        else:
            print("postgresql  skipped: set ADK_RX_TEST_POSTGRES_URL to include it")


if __name__ == "__main__":
    main()
