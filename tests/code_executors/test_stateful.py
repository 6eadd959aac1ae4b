"""Stateful executors: one interpreter per session keeps its variables and files; the
timeout, disposal, the idle timeout, close() and the death of this process end it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from reactivex.testing import TestScheduler

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.code_executors import (
    BaseCodeExecutor,
    CodeExecutionInput,
    File,
    SandboxedCodeExecutor,
    UnsafeLocalCodeExecutor,
    isolation,
)
from adk_rx.testing import ScriptedLlm
from tests.code_executors.support import announce, is_alive, make_fifo, read_pids, wait_exit
from tests.spine_support import call_response, new_context

pytestmark = pytest.mark.timeout(60)

SANDBOX = isolation.network_isolation()[0] is not None


def _executors() -> list[Any]:
    made: list[Any] = [pytest.param(UnsafeLocalCodeExecutor, id="local")]
    marks = [] if SANDBOX else [pytest.mark.skip(reason="no network namespace here")]
    made.append(pytest.param(SandboxedCodeExecutor, id="sandboxed", marks=marks))
    return made


def _run(executor: BaseCodeExecutor, code: str, key: str = "s1", **services: Any) -> Any:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])), **services)
    return executor.execute_code(ctx, CodeExecutionInput(code, (), key)).run()


@pytest.mark.parametrize("kind", _executors())
def test_variables_live_on_within_a_session_and_not_across_sessions(kind: Any) -> None:
    executor = kind(stateful=True, timeout=30)
    try:
        assert _run(executor, "x = 6").stdout == ""
        assert _run(executor, "print(x * 7)").stdout == "42\n"
        other = _run(executor, "print(x)", key="s2")
        assert "NameError: name 'x' is not defined" in other.stderr
        assert len(executor.kernels.pids()) == 2
    finally:
        executor.close()
    assert executor.kernels.pids() == {}


def test_the_agent_loop_keeps_one_interpreter_per_session() -> None:
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
    model = ScriptedLlm(
        ["```python\ntotal = sum(range(5))\n```", "```python\nprint(total * 2)\n```", "20."]
    )
    runner = InMemoryRunner(agent=LlmAgent(name="c", model=model, code_executor=executor))
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()
    try:
        events = list(runner.run(user_id="u", session_id=session.id, new_message="go"))
        outputs = [
            p.code_execution_result.output
            for e in events
            for p in (e.content.parts if e.content else None) or []
            if p.code_execution_result
        ]
        assert outputs[1] == "Code execution result:\n20\n\n"
        assert list(executor.kernels.pids()) == [session.id]
    finally:
        executor.close()


def test_files_stay_and_only_what_a_run_changed_comes_back() -> None:
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    try:
        first = CodeExecutionInput("open('a.txt', 'w').write('1')", (File("in.csv", b"x"),), "k")
        assert [f.name for f in executor.execute_code(ctx, first).run().output_files] == ["a.txt"]
        second = CodeExecutionInput("print(open('a.txt').read())", (File("in.csv", b"x"),), "k")
        result = executor.execute_code(ctx, second).run()
        assert result.stdout == "1\n" and result.output_files == ()
    finally:
        executor.close()


def test_what_the_codes_own_children_print_is_caught() -> None:
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
    try:
        code = "import os\nos.system('echo from a child')"
        assert _run(executor, code).stdout == "from a child\n"
    finally:
        executor.close()


def test_the_timeout_kills_the_interpreter_and_the_next_run_starts_fresh(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    timer = TestScheduler()
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=5)
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])), timer_scheduler=timer)
    try:
        executor.execute_code(ctx, CodeExecutionInput("x = 1", (), "k")).run()
        (pid,) = executor.kernels.pids().values()
        done = threading.Event()
        results: list[Any] = []
        spin = CodeExecutionInput(announce(fifo) + "while True:\n    pass", (), "k")
        executor.execute_code(ctx, spin).subscribe(results.append, lambda e: done.set(), done.set)
        assert read_pids(fifo) == [pid]  # the loop runs in the kernel (its timeout is set)
        timer.advance_by(5)
        assert done.wait(10)
        assert results[0].stderr == (
            "Code execution timed out after 5 seconds. The interpreter was restarted: "
            "variables from earlier runs are gone."
        )
        assert not is_alive(pid)
        after = executor.execute_code(ctx, CodeExecutionInput("print(x)", (), "k")).run()
        assert "NameError" in after.stderr
    finally:
        executor.close()


def test_disposing_a_run_kills_the_interpreter(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=None)
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    try:
        executor.execute_code(ctx, CodeExecutionInput("import time", (), "k")).run()
        (pid,) = executor.kernels.pids().values()
        started = threading.Event()
        sleep = CodeExecutionInput(announce(fifo) + "time.sleep(600)", (), "k")
        subscription = executor.execute_code(ctx, sleep).subscribe(on_next=lambda _: started.set())
        assert read_pids(fifo) == [pid]
        subscription.dispose()
        assert not is_alive(pid)
        assert not started.is_set()
    finally:
        executor.close()


def test_an_idle_interpreter_ends_after_idle_timeout_in_virtual_time() -> None:
    timer = TestScheduler()
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30, idle_timeout=60)
    try:
        _run(executor, "x = 1", timer_scheduler=timer)
        (pid,) = executor.kernels.pids().values()
        timer.advance_by(59)
        assert is_alive(pid)
        timer.advance_by(1)
        assert executor.kernels.pids() == {} and not is_alive(pid)
    finally:
        executor.close()


def test_code_that_kills_its_interpreter_is_told_so() -> None:
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
    try:
        result = _run(executor, "import os\nprint('bye', flush=True)\nos._exit(3)")
        assert result.stdout == "bye\n"
        assert result.stderr == (
            "Code execution exited with status 3. The interpreter was restarted: "
            "variables from earlier runs are gone."
        )
    finally:
        executor.close()


def test_the_interpreter_ends_when_this_process_dies() -> None:
    script = textwrap.dedent(
        """
        import os, sys
        from adk_rx import LlmAgent
        from adk_rx.code_executors import CodeExecutionInput, UnsafeLocalCodeExecutor
        from adk_rx.testing import ScriptedLlm
        from tests.spine_support import new_context
        executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
        ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
        executor.execute_code(ctx, CodeExecutionInput("x = 1", (), "k")).run()
        print(*executor.kernels.pids().values(), flush=True)
        os._exit(0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(done.stdout)
    assert wait_exit(pid) and not is_alive(pid)


@pytest.mark.skipif(not SANDBOX, reason="no network namespace here")
def test_a_stateful_sandbox_keeps_its_limits() -> None:
    executor = SandboxedCodeExecutor(stateful=True, memory_mb=128)
    try:
        _run(executor, "import socket")
        failed = _run(executor, "b = bytearray(512 * 1024 * 1024)")
        assert "MemoryError" in failed.stderr
        net = _run(executor, "socket.create_connection(('127.0.0.1', 9), timeout=5)")
        assert "Network is unreachable" in net.stderr
        assert _run(executor, "import os\nprint(sorted(os.environ))").stdout == (
            "['HOME', 'LANG', 'PATH', 'TMPDIR']\n"
        )
    finally:
        executor.close()


def test_closing_the_runner_ends_the_interpreters_of_its_agent_tree() -> None:
    executor = UnsafeLocalCodeExecutor(stateful=True, timeout=30)
    child = LlmAgent(
        name="child", model=ScriptedLlm(["```python\ny = 1\n```", "ok"]), code_executor=executor
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([call_response("transfer_to_agent", {"agent_name": "child"})]),
        sub_agents=[child],
    )
    runner = InMemoryRunner(agent=root)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()
    list(runner.run(user_id="u", session_id=session.id, new_message="go"))
    (pid,) = executor.kernels.pids().values()
    runner.close()
    assert executor.kernels.pids() == {} and not is_alive(pid)
