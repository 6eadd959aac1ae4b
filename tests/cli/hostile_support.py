"""A real ``adk-rx api-server`` for the hostile-input tests, on SQLite or PostgreSQL.

Two users hold tokens: ``alice`` (``ALICE``) and ``bob`` (``BOB``). The limits are small
enough that oversize and slow bodies are cheap to send: bodies up to 1 MiB, 2 seconds to
arrive. :func:`raw_request` sends bytes no well-behaved client would.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text, write_agents
from tests.sessions.postgres import scratch_schema

__all__ = [
    "ALICE",
    "APP",
    "BACKENDS",
    "BOB",
    "MAX_BODY",
    "client",
    "hostile_server",
    "raw_request",
    "run_body",
    "token",
]

APP = "chat"
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
MAX_BODY = 1024 * 1024
BACKENDS = ["sqlite", "postgresql"]


def token(user: str) -> dict[str, str]:
    return {"alice": ALICE, "bob": BOB}[user]


@contextlib.contextmanager
def _database(backend: str, root: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{root / 'sessions.db'}"
    else:
        with scratch_schema() as url:
            yield url


@contextlib.contextmanager
def hostile_server(backend: str, root: Path, *extra: str) -> Iterator[ServerProcess]:
    """The server on a fresh SQLite file or PostgreSQL schema, until the block ends
    (``extra``: more command-line options)."""
    agents = write_agents(root / "agents", APP)
    with _database(backend, root) as database:
        options = (
            *("--session-service-uri", database),
            *("--max-body-bytes", str(MAX_BODY), "--body-timeout", "2"),
            *extra,
        )
        env = {"ADK_RX_TOKENS": "alice-token=alice,bob-token=bob"}
        with api_server_process(agents, root, *options, env=env) as server:
            yield server


def run_body(user: str, sid: str, text: str = "hi", **extra: object) -> dict[str, object]:
    """A ``/run`` body."""
    body = {"app_name": APP, "user_id": user, "session_id": sid, "new_message": user_text(text)}
    return {**body, **extra}


def raw_request(server: ServerProcess, data: bytes, timeout: float = 30) -> bytes:
    """Sends ``data`` on a fresh connection; what came back before the server closed it."""
    answer = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:  # the server refused mid-way and reset the connection
            return answer
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    return answer


def client(server: ServerProcess, headers: dict[str, str] | None = None) -> httpx.Client:
    """A client of the server (no token unless given)."""
    return httpx.Client(base_url=server.url, headers=headers, timeout=60)
