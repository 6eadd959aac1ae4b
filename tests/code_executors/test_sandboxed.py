"""SandboxedCodeExecutor: memory and CPU limits, no network, a scrubbed environment, a
private directory, the timeout and disposal killing the group, and a clear refusal where the
machine cannot take the network away."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reactivex.testing import TestScheduler

from adk_rx import ConfigurationError, InMemoryRunner, LlmAgent, SandboxUnavailableError
from adk_rx.code_executors import CodeExecutionInput, File, SandboxedCodeExecutor, isolation
from adk_rx.testing import ScriptedLlm
from tests.code_executors.support import announce, is_alive, make_fifo, read_pids, wait_exit
from tests.spine_support import new_context

pytestmark = pytest.mark.timeout(60)

if isolation.network_isolation()[0] is None:
    pytest.skip(
        f"no network namespace here: {isolation.network_isolation()[1]}", allow_module_level=True
    )


def _run(executor: SandboxedCodeExecutor, code: str, *files: File, **services: Any) -> Any:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])), **services)
    return executor.execute_code(ctx, CodeExecutionInput(code, tuple(files))).run()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections (its port)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def test_an_allocation_past_the_memory_limit_fails_with_memory_error() -> None:
    result = _run(SandboxedCodeExecutor(memory_mb=128), "x = bytearray(512 * 1024 * 1024)")
    assert "MemoryError" in result.stderr and result.exit_code == 1
    fits = _run(SandboxedCodeExecutor(memory_mb=256), "print(len(bytearray(32 * 1024 * 1024)))")
    assert fits.stdout == f"{32 * 1024 * 1024}\n" and fits.stderr == ""


def test_spinning_past_the_cpu_limit_is_killed_and_says_why() -> None:
    result = _run(SandboxedCodeExecutor(cpu_seconds=1, timeout=None), "while True:\n    pass")
    assert result.stderr == (
        "Code execution was killed by SIGXCPU: its CPU time limit was reached."
    )


def test_the_code_cannot_raise_its_limits_again() -> None:
    code = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))"
    result = _run(SandboxedCodeExecutor(), code)
    assert "ValueError" in result.stderr or "PermissionError" in result.stderr


def test_there_is_no_network_not_even_this_machines_loopback(listener: int) -> None:
    code = (
        f"import socket\nsocket.create_connection(('127.0.0.1', {listener}), timeout=5)\n"
        "print('connected')"
    )
    closed = _run(SandboxedCodeExecutor(), code)
    assert "Network is unreachable" in closed.stderr and closed.stdout == ""
    opened = _run(SandboxedCodeExecutor(network=True), code)
    assert opened.stdout == "connected\n"


def test_the_environment_holds_no_secret_and_home_and_tmp_are_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ADK_RX_TEST_SECRET", "hunter2")
    code = (
        "import os, tempfile\n"
        "print(sorted(os.environ))\n"
        "print(os.getcwd() == os.environ['HOME'])\n"
        "print(os.path.dirname(tempfile.gettempdir()) == os.path.dirname(os.getcwd()))"
    )
    result = _run(SandboxedCodeExecutor(), code)
    assert result.stdout == "['HOME', 'LANG', 'PATH', 'TMPDIR']\nTrue\nTrue\n"


def test_a_file_past_the_size_limit_is_refused() -> None:
    code = "open('big.bin', 'wb').write(b'x' * (2 * 1024 * 1024))"
    result = _run(SandboxedCodeExecutor(file_size_mb=1), code)
    assert "File too large" in result.stderr


def test_files_go_in_and_come_out() -> None:
    code = "n = len(open('in.txt').read().split())\nopen('count.txt', 'w').write(str(n))"
    result = _run(SandboxedCodeExecutor(), code, File("in.txt", b"one two three"))
    assert [(f.name, f.content, f.mime_type) for f in result.output_files] == [
        ("count.txt", b"3", "text/plain")
    ]


def test_the_timeout_kills_the_group_in_virtual_time(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    timer = TestScheduler()
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])), timer_scheduler=timer)
    # The child writes to the FIFO from inside its namespaces: the path is this machine's.
    code = announce(fifo) + "while True:\n    pass\n"
    done = threading.Event()
    results: list[Any] = []
    run = SandboxedCodeExecutor(timeout=2, cpu_seconds=None).execute_code(
        ctx, CodeExecutionInput(code)
    )
    run.subscribe(results.append, lambda e: done.set(), done.set)
    (pid,) = read_pids(fifo)
    timer.advance_by(2)
    assert done.wait(10)
    assert not is_alive(pid)
    assert "timed out after 2 seconds" in results[0].stderr


def test_disposal_kills_the_running_child_and_its_children(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    sleeper = f"[{sys.executable!r}, '-c', 'import time; time.sleep(600)']"
    code = (
        f"import subprocess\nchild = subprocess.Popen({sleeper})\n"
        + announce(fifo, "str(child.pid)")
        + "child.wait()\n"
    )
    model = ScriptedLlm([f"```python\n{code}\n```"])
    agent = LlmAgent(name="coder", model=model, code_executor=SandboxedCodeExecutor(timeout=None))
    runner = InMemoryRunner(agent=agent, app_name="app")
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    subscription = runner.run_async(user_id="u", session_id="s", new_message="go").subscribe()
    pids = read_pids(fifo)  # pids as the child's namespace sees them: the same pid namespace
    assert all(is_alive(p) for p in pids)
    subscription.dispose()
    assert all(wait_exit(p) for p in pids)
    assert not any(is_alive(p) for p in pids)


def test_no_network_is_refused_clearly_where_the_machine_cannot(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no unshare on PATH
    with pytest.raises(SandboxUnavailableError, match=r"unshare command .* is not on PATH"):
        SandboxedCodeExecutor()
    assert SandboxedCodeExecutor(network=True).network  # with the network, it still runs


def test_misconfiguration_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        SandboxedCodeExecutor(memory_mb=0)
    with pytest.raises(ConfigurationError):
        SandboxedCodeExecutor(cpu_seconds=-1)
    with pytest.raises(ConfigurationError):
        SandboxedCodeExecutor(timeout=0)
    with pytest.raises(ConfigurationError):
        SandboxedCodeExecutor(output_limit=0)
