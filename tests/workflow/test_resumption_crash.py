"""SIGKILL of a worker in the middle of a workflow, then resuming its invocation here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from adk_rx import Runner, SqlSessionService
from tests.workflow.crash_workflow import build

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


def _c_is_stored(url: str) -> bool:
    """Whether the worker's store holds node c's end record (c ran beside b)."""
    service = SqlSessionService(url)
    try:
        session = service.get_session(app_name="crash", user_id="u", session_id="s").run()
    finally:
        service.close()
    return session is not None and any(
        (e.actions.agent_state or {}).get("node") == "c"
        and (e.actions.agent_state or {}).get("status") == "completed"
        for e in session.events
    )


def _kill_inside_b(url: str, log: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), ADK_RX_ALLOW_REAL_MODEL_CALLS="0")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.workflow.crash_workflow", url, str(log)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and "blocked" in log.read_text().split() and _c_is_stored(url)):
            assert worker.poll() is None, worker.stderr.read() if worker.stderr else ""
            assert time.monotonic() < deadline, "the worker never reached node b"
            time.sleep(0.05)  # polling another process's progress: nothing to subscribe to
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        if worker.stderr is not None:
            worker.stderr.close()


def test_sigkill_mid_graph_then_resume_runs_only_the_unfinished_nodes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    log = tmp_path / "runs.log"
    _kill_inside_b(url, log)
    service = SqlSessionService(url)
    try:
        runner = Runner(app=build(log, block=False), session_service=service)
        stored = service.get_session(app_name="crash", user_id="u", session_id="s").run()
        invocation = stored.events[0].invocation_id
        before = {e.node_info.path for e in stored.events if e.output is not None and e.node_info}

        resumed = list(runner.run(user_id="u", session_id="s", invocation_id=invocation))

        after = service.get_session(app_name="crash", user_id="u", session_id="s").run()
    finally:
        service.close()
    runs = Counter(line for line in log.read_text().split() if line != "blocked")
    assert before == {"wf@1/a@1", "wf@1/c@1"}  # stored before the kill
    assert runs == {"a": 1, "c": 1, "b": 2, "d": 1}  # only b (cut off) ran again
    assert [(e.node_info.path, e.output) for e in resumed if e.output is not None] == [
        ("wf@1/b@1", "AB"),
        ("wf@1/join@1", {"b": "AB", "c": "AC"}),
        ("wf@1/d@1", "b=AB|c=AC"),
    ]
    assert resumed[-1].actions.end_of_agent
    assert {e.invocation_id for e in after.events} == {invocation}
