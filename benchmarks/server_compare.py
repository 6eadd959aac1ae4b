"""adk-rx's api-server against google-adk's api_server, over HTTP, on the same offline model.

    python benchmarks/server_compare.py            # memory, SQLite (+ PostgreSQL when set)
    python benchmarks/server_compare.py --quick    # a smoke run

Both servers run as processes on 127.0.0.1 with an agent whose model (built in, offline)
streams five text chunks and the whole reply per turn (``stream N``: N chunks). The clients
post google-adk's ``/run_sse`` with streaming on and read each stream to its end; a client
takes a fresh session every 10 turns (short sessions). Runs of the two servers alternate and
the median of ``--rounds`` is printed, with the ratio adk-rx / google-adk. Printed:

* turns/s at 1, 8 and 64 clients per store (``memory``, ``sqlite``, and ``postgresql`` when
  ``ADK_RX_BENCH_POSTGRES_URL`` or ``ADK_RX_TEST_POSTGRES_URL`` is set; a schema of its own);
* the servers' CPU per turn (user + system time of the server process over the run);
* events/s on one stream of 20,000 chunks;
* adk-rx's RSS after 1,000 and after 6,000 turns (8 clients, SQLite); ``--stores ''``
  measures only that.

Figures depend on the machine; give ``uptime``'s load with them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import httpx
import sqlalchemy as sa
from lean_http import Connection, HttpError, count_frames

REPO = Path(__file__).resolve().parents[1]
APP = "bench"

RX_AGENT = textwrap.dedent("""
    import reactivex as rx
    from google.genai import types
    from adk_rx import LlmAgent
    from adk_rx.models import LlmResponse
    from adk_rx.models.llm_response import model_content
    from adk_rx.testing import ScriptedLlm

    def reply(request):
        text = request.contents[-1].parts[-1].text or ""
        count = int(text.split()[1]) if text.startswith("stream ") else 5
        chunks = [LlmResponse(content=model_content(types.Part(text=f"t{i} ")), partial=True)
                  for i in range(count)]
        whole = LlmResponse(content=model_content(types.Part(text="done")), turn_complete=True)
        return rx.from_iterable(chunks + [whole])

    model = ScriptedLlm([reply] * 10_000_000, keep_requests=False)  # keeps no request
    root_agent = LlmAgent(name="bench", model=model)
""")

ADK_AGENT = textwrap.dedent("""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    def content(text):
        return types.Content(role="model", parts=[types.Part(text=text)])

    class Fake(BaseLlm):
        model: str = "fake"

        async def generate_content_async(self, llm_request, stream=False):
            text = llm_request.contents[-1].parts[-1].text or ""
            count = int(text.split()[1]) if text.startswith("stream ") else 5
            for i in range(count):
                yield LlmResponse(content=content(f"t{i} "), partial=True)
            yield LlmResponse(content=content("done"), turn_complete=True)

    root_agent = LlmAgent(name="bench", model=Fake())
""")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    name: str
    url: str
    process: subprocess.Popen[bytes]

    def cpu(self) -> float:
        """Seconds of CPU the server process used so far (all its threads)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0


@contextmanager
def server(name: str, folder: Path, uri: str | None) -> Iterator[Server]:
    port = _free_port()
    (folder / APP).mkdir(parents=True, exist_ok=True)
    (folder / APP / "agent.py").write_text(RX_AGENT if name == "adk-rx" else ADK_AGENT)
    bin_dir = Path(sys.executable).parent
    if name == "adk-rx":
        command = [str(bin_dir / "adk-rx"), "api-server", str(folder), "--port", str(port)]
        command += ["--data-dir", str(folder / "data")]
        command += ["--session-service-uri", uri] if uri else []
    else:
        command = [str(bin_dir / "adk"), "api_server", str(folder), "--port", str(port)]
        command += ["--log_level", "warning"] + (["--session_service_uri", uri] if uri else [])
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/list-apps", timeout=1)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start: {' '.join(command)}") from None
                time.sleep(0.2)
        yield Server(name, url, process)
    finally:
        process.terminate()
        process.wait(20)


async def _turns(name: str, url: str, clients: int, per_client: int, text: str) -> int:
    if CLIENT == "httpx":
        return await _turns_httpx(name, url, clients, per_client, text)
    events = 0
    failures: list[str] = []

    async def client(index: int) -> None:
        nonlocal events
        user, sid = f"u{index}-{uuid.uuid4().hex[:6]}", ""
        http = Connection(url)
        for turn in range(per_client):
            try:
                if turn % 10 == 0:
                    created = await http.json("POST", f"/apps/{APP}/users/{user}/sessions", {})
                    sid = created["id"]
                async for chunk in http.stream("POST", "/run_sse", _run_body(user, sid, text)):
                    events += count_frames(chunk)
            except (HttpError, OSError, asyncio.IncompleteReadError) as exc:
                failures.append(f"{type(exc).__name__} {exc}"[:80])
                await http.close()
        await http.close()

    await asyncio.gather(*(client(i) for i in range(clients)))
    if failures:
        print(f"  {name}: {len(failures)} failed turns, e.g. {failures[0]}", flush=True)
    return events


def _run_body(user: str, sid: str, text: str) -> dict[str, object]:
    return {
        "app_name": APP,
        "user_id": user,
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": text}]},
        "streaming": True,
    }


async def _turns_httpx(name: str, url: str, clients: int, per_client: int, text: str) -> int:
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    events = 0
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:

        async def client(index: int) -> None:
            nonlocal events
            user, sid = f"u{index}-{uuid.uuid4().hex[:6]}", ""
            for turn in range(per_client):
                if turn % 10 == 0:
                    created = await http.post(f"/apps/{APP}/users/{user}/sessions", json={})
                    sid = created.json()["id"]
                body = _run_body(user, sid, text)
                try:
                    async with http.stream("POST", "/run_sse", json=body) as response:
                        if response.status_code != 200:
                            raise httpx.HTTPStatusError(
                                str(response.status_code),
                                request=response.request,
                                response=response,
                            )
                        async for line in response.aiter_lines():
                            events += line.startswith("data:")
                except httpx.HTTPError as exc:  # counted and printed, the run goes on
                    failures.append(f"{type(exc).__name__} {exc}"[:80])

        await asyncio.gather(*(client(i) for i in range(clients)))
    if failures:
        print(f"  {name}: {len(failures)} failed turns, e.g. {failures[0]}", flush=True)
    return events


CLIENTS_PER_PROCESS = 16  # what one Python client process reads at full speed, about
CLIENT = "lean"  # or "httpx" (--client): what the client side costs shows in client CPU


def _drive(name: str, url: str, clients: int, per_client: int, text: str) -> tuple[int, float]:
    """(events read, CPU seconds this client process used)."""
    before = time.process_time()
    events = asyncio.run(_turns(name, url, clients, per_client, text))
    return events, time.process_time() - before


@dataclass(frozen=True)
class Measured:
    turns_s: float
    cpu_ms: float  # the server's CPU per turn
    events_s: float
    client_ms: float  # the client processes' CPU per turn


def measure(srv: Server, clients: int, per_client: int, text: str = "hello") -> Measured:
    """One run. Past ``CLIENTS_PER_PROCESS`` the clients are spread over several processes,
    so one client process's speed is not what is measured."""
    processes = max(1, clients // CLIENTS_PER_PROCESS)
    cpu, start = srv.cpu(), time.perf_counter()
    if processes == 1:
        results = [_drive(srv.name, srv.url, clients, per_client, text)]
    else:
        with ProcessPoolExecutor(processes, mp_context=get_context("fork")) as pool:
            share = clients // processes
            futures = [
                pool.submit(_drive, srv.name, srv.url, share, per_client, text)
                for _ in range(processes)
            ]
            results = [future.result() for future in futures]
    wall, used = time.perf_counter() - start, srv.cpu() - cpu
    turns = clients * per_client
    events, client = sum(r[0] for r in results), sum(r[1] for r in results)
    return Measured(turns / wall, used * 1000 / turns, events / wall, client * 1000 / turns)


@contextmanager
def store(kind: str, folder: Path, runtime: str) -> Iterator[str | None]:
    if kind == "memory":
        yield "memory://"
    elif kind == "sqlite":
        path = folder / f"{runtime}.db"
        yield f"sqlite:///{path}" if runtime == "adk-rx" else f"sqlite+aiosqlite:///{path}"
    else:
        base = os.environ.get("ADK_RX_BENCH_POSTGRES_URL") or os.environ["ADK_RX_TEST_POSTGRES_URL"]
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        engine = sa.create_engine(base.replace("postgresql://", "postgresql+psycopg://", 1))
        with engine.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        scoped = f"{base}?options=-csearch_path%3D{schema}"
        try:
            yield (
                scoped
                if runtime == "adk-rx"
                else scoped.replace("postgresql://", "postgresql+psycopg://", 1)
            )
        finally:
            with engine.begin() as conn:
                conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
            engine.dispose()


def compare(kind: str, client_counts: list[int], turns: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        servers = []
        for name in ("adk-rx", "google-adk"):
            uri = stack.enter_context(store(kind, Path(tmp), name))
            servers.append(stack.enter_context(server(name, Path(tmp) / name, uri)))
        for srv in servers:
            measure(srv, 4, 10)  # warm up: imports, pools, first sessions
        for clients in client_counts:
            per_client = max(10, turns // clients)
            runs: dict[str, list[Measured]] = {s.name: [] for s in servers}
            for _ in range(rounds):
                for srv in servers:
                    runs[srv.name].append(measure(srv, clients, per_client))
            rx, adk = (_median(runs[n]) for n in ("adk-rx", "google-adk"))
            print(
                f"{kind:<10} {clients:>3} clients  adk-rx {rx.turns_s:7.1f} turns/s"
                f" {rx.cpu_ms:5.1f} ms CPU   google-adk {adk.turns_s:7.1f} turns/s"
                f" {adk.cpu_ms:5.1f} ms CPU   ratio {rx.turns_s / adk.turns_s:4.1f}x,"
                f" CPU {adk.cpu_ms / rx.cpu_ms:4.1f}x less;"
                f" client CPU {rx.client_ms:.1f} / {adk.client_ms:.1f} ms per turn",
                flush=True,
            )
        chunks = 2_000 if turns < 200 else 20_000
        for srv in servers:
            rate = statistics.median(
                measure(srv, 1, 1, f"stream {chunks}").events_s for _ in range(rounds)
            )
            print(f"{kind:<10} one stream of {chunks} chunks: {srv.name} {rate:9.0f} events/s")


def _median(runs: list[Measured]) -> Measured:
    return Measured(
        *(statistics.median(getattr(r, f) for r in runs) for f in Measured.__dataclass_fields__)
    )


def rss(total: int) -> None:
    # On SQLite: what is stored lives on disk, so what the process keeps in memory shows.
    with (
        tempfile.TemporaryDirectory() as tmp,
        server("adk-rx", Path(tmp), f"sqlite:///{Path(tmp) / 'rss.db'}") as srv,
    ):
        measure(srv, 8, 125)  # 1,000 turns
        first = srv.rss_mb()
        done = 1000
        while done < total:
            measure(srv, 8, 125)
            done += 1000
        print(
            f"adk-rx RSS (SQLite) after 1,000 turns {first:.0f} MB, "
            f"after {total:,} {srv.rss_mb():.0f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="adk-rx api-server against google-adk api_server")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--stores", default="memory,sqlite,postgresql")
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--turns", type=int, default=640, help="turns per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rss-turns", type=int, default=6000)
    parser.add_argument(
        "--client", choices=("lean", "httpx"), default="lean", help="the clients' HTTP library"
    )
    args = parser.parse_args()
    global CLIENT
    CLIENT = args.client
    if shutil.which("adk", path=str(Path(sys.executable).parent)) is None:
        sys.exit('google-adk is not installed: pip install -e ".[bench]"')
    turns, rounds, rss_turns = args.turns, args.rounds, args.rss_turns
    if args.quick:
        turns, rounds, rss_turns = 64, 1, 2000
    has_pg = bool(
        os.environ.get("ADK_RX_BENCH_POSTGRES_URL") or os.environ.get("ADK_RX_TEST_POSTGRES_URL")
    )
    print(f"load: {os.getloadavg()[0]:.2f}; {turns} turns per run, median of {rounds}", flush=True)
    for kind in filter(None, args.stores.split(",")):
        if kind == "postgresql" and not has_pg:
            print("postgresql skipped: set ADK_RX_BENCH_POSTGRES_URL")
            continue
        compare(kind, [int(c) for c in args.clients.split(",")], turns, rounds)
    rss(rss_turns)
    print(f"load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
