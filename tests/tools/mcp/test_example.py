"""The MCP example runs offline: its agent talks to the MCP server shipped next to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "mcp_notes"

pytestmark = pytest.mark.timeout(120)


def test_the_notes_example_lists_server_tools_and_shows_progress(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"GOOGLE_API_KEY", "GEMINI_API_KEY", "ADK_RX_MODEL"}
    }
    env["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", str(EXAMPLE), "--in-memory", "-m", "index"],
        cwd=tmp_path,
        env=env,
        text=True,
        capture_output=True,
        timeout=100,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "→ notes calls index_notes()" in lines
    assert any("index_notes:" in line and '"indexed note 2"' in line for line in lines)
    assert lines[-2].startswith('notes: index_notes answered: {"result": "indexed 2 notes"}')
