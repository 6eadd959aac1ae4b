"""Load: 200 concurrent SSE clients on one server, one of them deliberately slow.

The server runs in a subprocess on 127.0.0.1 (so its memory is its own); the clients run here.
199 clients read one streaming invocation at full speed; one client reads its socket a few
hundred bytes at a time through a small receive buffer. Checked: every fast client gets
every event, in order, and finishes soon after the run ends although the slow client is still
far behind; the run itself finishes while the slow client lags; the slow client, once it
speeds up, still gets every event (the shared log kept them); the server's peak memory grows
by a bounded amount. The figures are printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import h11
import httpx
import pytest

from tests.cli.server_support import unique_app, user_text, write_agents

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
CLIENTS = 200
EVENTS = 800  # streamed chunks; the final aggregated event makes EVENTS + 1
PERIOD = 0.004  # seconds between chunks: a run of about 3.2 s
MEMORY_BOUND_MB = 150

SERVER = textwrap.dedent("""
    import socket, sys
    import uvicorn
    from adk_rx import InMemorySessionService
    from adk_rx.cli.server import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)
    app = create_app(sys.argv[1], session_service=InMemorySessionService())
    config = uvicorn.Config(app, log_level="warning", backlog=1024)
    uvicorn.Server(config).run(sockets=[sock])
""")


def memory_kb(pid: int, field_name: str) -> int | None:
    """A ``/proc/<pid>/status`` memory field in kB (None where /proc is missing)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    app = unique_app("load")
    agents = write_agents(tmp_path / "agents", app)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(agents)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"127.0.0.1:{port}", app, process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


@dataclass
class Reader:
    """What one client saw."""

    ids: list[int] = field(default_factory=list)
    end: dict | None = None
    finished_at: float | None = None


def feed(buffer: bytes, reader: Reader) -> bytes:
    """Parses the complete frames in ``buffer``; returns the rest."""
    *frames, rest = buffer.split(b"\n\n")
    for frame in frames:
        if frame.startswith(b"id: "):
            reader.ids.append(int(frame[4 : frame.index(b"\n")]))
        elif frame.startswith(b"event: end"):
            reader.end = json.loads(frame.split(b"data: ", 1)[1])
            reader.finished_at = time.monotonic()
    return rest


async def fast_client(http: httpx.AsyncClient, url: str) -> Reader:
    reader = Reader()
    buffer = b""
    async with http.stream("GET", url) as response:
        assert response.status_code == 200
        async for chunk in response.aiter_raw():
            buffer = feed(buffer + chunk, reader)
    return reader


async def slow_client(host: str, path: str, reader: Reader, slow_until: asyncio.Event) -> None:
    """Reads 256 bytes every 20 ms through a 4 KiB receive buffer until told to hurry."""
    name, port = host.split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (name, int(port)))
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="GET", target=path, headers=[("Host", host), ("Accept", "text/event-stream")]
    )
    await loop.sock_sendall(sock, connection.send(request) + connection.send(h11.EndOfMessage()))
    buffer = b""
    try:
        while reader.end is None:
            size = 256 if not slow_until.is_set() else 65536
            data = await loop.sock_recv(sock, size)
            connection.receive_data(data)
            while True:
                event = connection.next_event()
                if event is h11.NEED_DATA or isinstance(event, h11.EndOfMessage):
                    break
                if isinstance(event, h11.Data):
                    buffer = feed(buffer + bytes(event.data), reader)
            if not data:
                break
            if not slow_until.is_set():
                await asyncio.sleep(0.02)  # the deliberate slowness, not a wait for anything
    finally:
        sock.close()


async def test_200_sse_clients_one_slow_the_others_unaffected_and_memory_bounded(server):
    host, app, process = server
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=f"http://{host}", timeout=60, limits=limits) as http:
        created = await http.post(f"/apps/{app}/users/u1/sessions", json={"session_id": "s1"})
        assert created.status_code == 200
        baseline_kb = memory_kb(process.pid, "VmRSS")
        started = await http.post(
            f"/apps/{app}/users/u1/sessions/s1/invocations",
            json={"new_message": user_text(f"slow {EVENTS} {PERIOD}"), "streaming": True},
        )
        assert started.status_code == 202
        invocation_id = started.json()["invocation_id"]
        path = f"/apps/{app}/users/u1/sessions/s1/invocations/{invocation_id}/events"
        t0 = time.monotonic()
        hurry = asyncio.Event()
        slow_reader = Reader()
        slow = asyncio.create_task(slow_client(host, path, slow_reader, hurry))
        fast = await asyncio.wait_for(
            asyncio.gather(*(fast_client(http, path) for _ in range(CLIENTS - 1))), 120
        )
        fast_done = time.monotonic()
        status = (await http.get(path.removesuffix("/events"))).json()
        slow_seen = len(slow_reader.ids)  # its progress when every fast client was done
        hurry.set()
        await asyncio.wait_for(slow, 60)
        peak_kb = memory_kb(process.pid, "VmHWM")
        final_kb = memory_kb(process.pid, "VmRSS")

    expected = list(range(1, EVENTS + 2))
    for reader in fast:
        assert reader.ids == expected
        assert reader.end is not None and reader.end["status"] == "completed"
    assert status["status"] == "completed"
    assert slow_reader.ids == expected  # the shared log kept every event for it
    run_seconds = status["finished_at"] - status["created_at"]
    ends = sorted(r.finished_at for r in fast if r.finished_at is not None)
    print(
        f"\nload: {CLIENTS} clients ({CLIENTS - 1} fast, 1 slow), {EVENTS + 1} events each; "
        f"run {run_seconds:.2f} s (nominal {EVENTS * PERIOD:.2f} s); fast clients done "
        f"{fast_done - t0:.2f} s after start (first {ends[0] - t0:.2f} s, last "
        f"{ends[-1] - t0:.2f} s); server RSS {baseline_kb} kB -> peak {peak_kb} kB, "
        f"final {final_kb} kB; the slow client had {slow_seen} events when the fast ones were done"
    )
    assert slow_seen < (EVENTS + 1) // 2  # it really was behind while the others finished
    # The run was not held back by anyone: it ended close to its nominal length.
    assert run_seconds < EVENTS * PERIOD * 3 + 5
    if baseline_kb is not None and peak_kb is not None:
        assert (peak_kb - baseline_kb) / 1024 < MEMORY_BOUND_MB
