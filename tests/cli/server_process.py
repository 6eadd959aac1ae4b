"""A real ``adk-rx api-server`` in a subprocess, for the tests that need the whole process.

The process is started with ``python -m adk_rx.cli api-server`` (or ``web``) in a working
folder of the test's choosing (its SQLite sessions go under it); the helper waits until
uvicorn reports that it listens, reading the process's stderr, so no test sleeps for it
(nor for a line the process logs later: :meth:`ServerProcess.wait_for`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ServerProcess", "api_server_process", "free_port"]

REPO = Path(__file__).resolve().parents[2]
_PROVIDER_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServerProcess:
    """A running server: its base URL, the process, and what it wrote to stderr so far."""

    url: str
    host: str
    port: int
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)
    written: threading.Condition = field(default_factory=threading.Condition)

    def is_alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return "".join(self.stderr)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The stderr so far, once it holds ``text`` (AssertionError after ``timeout``)."""
        with self.written:
            self.written.wait_for(lambda: text in self.output(), timeout)
        output = self.output()
        assert text in output, f"{text!r} never showed in the server's stderr:\n{output}"
        return output


@contextlib.contextmanager
def api_server_process(
    agents_dir: Path,
    cwd: Path,
    *options: str,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 60,
    command: str = "api-server",
) -> Iterator[ServerProcess]:
    """Runs ``adk-rx api-server agents_dir`` (or ``command``) on a free loopback port until
    the block ends."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    environment["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
    environment["PYTHONPATH"] = os.pathsep.join([str(REPO), environment.get("PYTHONPATH", "")])
    environment.update(env or {})
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "adk_rx.cli", command, str(agents_dir)),
            *("--port", str(port), *options),
        ],
        cwd=cwd,
        env=environment,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = ServerProcess(f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", port, process)
    ready = threading.Event()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with server.written:
                server.stderr.append(line)
                server.written.notify_all()
            if "Uvicorn running on" in line:  # listening (startup completes before that)
                ready.set()
        ready.set()  # the process ended: stop waiting

    threading.Thread(target=pump, name="server-stderr", daemon=True).start()
    try:
        if not ready.wait(startup_timeout) or not server.is_alive():
            raise RuntimeError(f"the server did not start:\n{server.output()}")
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
