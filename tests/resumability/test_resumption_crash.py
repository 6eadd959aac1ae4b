"""SIGKILL of a worker mid-tool, then resuming its invocation in this process (SQLite, PG)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from adk_rx import Runner, SqlSessionService
from adk_rx.testing import simplify_events
from tests.resumability.crash_app import build
from tests.sessions.postgres import scratch_schema

REPO = Path(__file__).resolve().parents[2]


def _kill_mid_tool(url: str, log: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), ADK_RX_ALLOW_REAL_MODEL_CALLS="0")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.resumability.crash_app", url, str(log)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and {"blocked", "tool:lookup"} <= set(log.read_text().split())):
            assert worker.poll() is None, worker.stderr.read() if worker.stderr else ""
            assert time.monotonic() < deadline, "the worker never reached the tool"
            time.sleep(0.05)  # polling another process's progress: nothing to subscribe to
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        if worker.stderr is not None:
            worker.stderr.close()


def _resume_after_kill(url: str, log: Path) -> None:
    _kill_mid_tool(url, log)
    service = SqlSessionService(url)
    try:
        runner = Runner(app=build(log, block=False), session_service=service)
        stored = service.get_session(app_name="crash", user_id="u", session_id="s").run()
        invocation = stored.events[0].invocation_id

        resumed = list(runner.run(user_id="u", session_id="s", invocation_id=invocation))

        after = service.get_session(app_name="crash", user_id="u", session_id="s").run()
    finally:
        service.close()
    counts = Counter(line for line in log.read_text().split() if line != "blocked")
    assert counts == {
        "model:a": 1,  # finished before the crash: not again
        "model:b": 2,  # the call, then the answer after the resume
        "tool:lookup": 2,  # idempotent: its response was never stored, so it ran again
        "tool:charge": 1,  # not idempotent: answered "interrupted" instead
        "model:c": 1,
    }
    assert simplify_events(e for e in resumed if e.content is not None) == [
        'b: FunctionResponse(charge, {"error": "interrupted"})',
        'b: FunctionResponse(lookup, {"order": "o-1", "total": 42})',
        "b: b done",
        "c: c done",
    ]
    assert {e.invocation_id for e in after.events} == {invocation}
    # every call of the stored history has its response
    calls = {c.id for e in after.events for c in e.get_function_calls()}
    answers = {r.id for e in after.events for r in e.get_function_responses()}
    assert calls == answers


def test_sigkill_mid_tool_then_resume_on_sqlite(tmp_path: Path):
    _resume_after_kill(f"sqlite:///{tmp_path / 'sessions.db'}", tmp_path / "calls.log")


def test_sigkill_mid_tool_then_resume_on_postgresql(tmp_path: Path):
    with scratch_schema() as url:
        _resume_after_kill(url, tmp_path / "calls.log")
