"""``adk-rx`` itself: a server process survives peers that go away (SIGPIPE).

``adk-rx run`` restores the default SIGPIPE (a reader that goes away ends it quietly, like
``head``); the servers must not, or a client closing its socket kills every run in the
process with exit 141. Both ways a server meets a closed peer are reproduced against a real
``adk-rx api-server`` subprocess: SSE clients that drop mid-stream, and a model server that
answers 413 to a large request and closes the connection.
"""

from __future__ import annotations

import json
import signal
import socket
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text, write_agents

pytestmark = pytest.mark.timeout(120)

BIG_MODEL_AGENT = textwrap.dedent("""
    import os

    from adk_rx import LlmAgent
    from adk_rx.models import OpenAiCompatibleLlm

    root_agent = LlmAgent(
        name="big",
        model=OpenAiCompatibleLlm("m", base_url=os.environ["FAKE_MODEL_URL"], retry=None),
        instruction="x" * 8_000_000,  # a request far larger than the socket buffers
    )
""")


def _answer_413_and_close(listener: socket.socket) -> None:
    """A model server that refuses large requests: 413 after the headers, then it closes.

    It half-closes first and then closes with the body unread, as a proxy that gives up on an
    upload does: the client, still sending, finds its peer gone.
    """
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                head += chunk
            conn.sendall(
                b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            conn.shutdown(socket.SHUT_WR)
            conn.recv(65536)


@pytest.fixture
def model_413() -> Iterator[str]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    threading.Thread(target=_answer_413_and_close, args=(listener,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        listener.close()


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    root = write_agents(tmp_path / "agents", "chat")
    (root / "big").mkdir()
    (root / "big" / "agent.py").write_text(BIG_MODEL_AGENT)
    return root


def ignores_sigpipe(pid: int) -> bool | None:
    """Whether the process ignores SIGPIPE (its ``SigIgn`` mask); None without /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(mask, 16) & (1 << (signal.SIGPIPE - 1)))


def assert_still_serving(server: ServerProcess, http: httpx.Client) -> None:
    assert server.is_alive(), f"exit {server.process.returncode}:\n{server.output()}"
    http.post("/apps/chat/users/u1/sessions", json={"session_id": "after"})
    answer = http.post(
        "/run",
        json={
            "app_name": "chat",
            "user_id": "u1",
            "session_id": "after",
            "new_message": user_text("hello"),
        },
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()[-1]["content"]["parts"][0]["text"] == "echo: hello"


def test_the_server_survives_sse_clients_that_drop_mid_stream(agents: Path, tmp_path: Path):
    streams = 40
    with (
        api_server_process(agents, tmp_path) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        assert ignores_sigpipe(server.process.pid) in (True, None)
        clients = []
        for i in range(streams):
            http.post("/apps/chat/users/u1/sessions", json={"session_id": f"s{i}"})
            body = json.dumps(
                {
                    "app_name": "chat",
                    "user_id": "u1",
                    "session_id": f"s{i}",
                    "new_message": user_text("slow 2000 0.001"),
                    "streaming": True,
                }
            ).encode()
            client = socket.create_connection(("127.0.0.1", server.port))
            client.sendall(
                b"POST /run_sse HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (server.host.encode(), len(body), body)
            )
            clients.append(client)
        for client in clients:
            assert client.recv(4096).startswith(b"HTTP/1.1 200")
        for client in clients:
            time.sleep(0.01)  # paced, so the drops land while the streams are busy
            # Gone mid-stream with frames unread: the server writes on to a closed peer.
            client.shutdown(socket.SHUT_WR)
            client.close()
        assert_still_serving(server, http)
        # The runs went on without their readers; cancelling them ends them.
        for i in range(streams):
            base = f"/apps/chat/users/u1/sessions/s{i}/invocations"
            url = f"{base}/{http.get(base).json()[0]['invocation_id']}"
            http.post(f"{url}:cancel")
            http.get(f"{url}/events")
            assert http.get(url).json()["status"] in ("completed", "cancelled")
        assert server.is_alive()


def test_the_server_survives_a_model_server_that_answers_413_and_closes(
    agents: Path, tmp_path: Path, model_413: str
):
    with (
        api_server_process(agents, tmp_path, env={"FAKE_MODEL_URL": model_413}) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        http.post("/apps/big/users/u1/sessions", json={"session_id": "s1"})
        answer = http.post(
            "/run",
            json={
                "app_name": "big",
                "user_id": "u1",
                "session_id": "s1",
                "new_message": user_text("hi"),
            },
        )
        assert answer.status_code == 502  # the model call failed; the process did not
        assert "Error" in answer.json()["detail"]
        assert_still_serving(server, http)
