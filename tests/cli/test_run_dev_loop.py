"""``adk-rx run`` on the examples a newcomer tries first (subprocesses in a temporary folder)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.cli.test_run import REPO, _env, adk_rx

DURABLE_APP = REPO / "examples" / "durable_app.py"


def test_durable_app_resumed_through_run_continues_the_paused_invocation(tmp_path: Path):
    first = adk_rx(tmp_path, "run", str(DURABLE_APP), "-m", "Refund order 1234")
    assert first.returncode == 0, first.stderr
    found = re.search(r"--session-id (\w+)", first.stderr)  # the hint is a note on stderr
    assert found, first.stderr

    resumed = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", str(DURABLE_APP), "--session-id", found[1]],
        cwd=tmp_path,
        env=_env(),
        text=True,
        capture_output=True,
        input='{"approved": true}\n',
        timeout=60,
    )

    assert resumed.returncode == 0, resumed.stderr
    out = resumed.stdout
    assert "approve: Approved: refunding 40 EUR." in out
    assert "notify: Customer notified." in out  # the sequence goes on after the pause
    assert "check:" not in out.split("waits for its result")[-1]  # check does not run again
    assert out.count("calls ask_manager") == 0  # the manager is not asked a second time


def test_a_file_without_an_agent_is_named_by_its_path(tmp_path: Path):
    script = tmp_path / "workflow.py"
    script.write_text("x = 1\n")

    done = adk_rx(tmp_path, "run", str(script), "-m", "hi")

    assert done.returncode == 2
    assert f"{script} defines no 'root_agent'" in done.stderr
    assert "_adk_rx_agent" not in done.stderr
