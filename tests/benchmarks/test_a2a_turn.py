"""benchmarks/a2a_turn.py runs (a few turns) and prints the added p50 with the load."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.test_report import BENCHMARKS


def test_a_small_run_prints_both_callers_added_latency() -> None:
    result = subprocess.run(
        [sys.executable, "a2a_turn.py", "--turns", "5"],
        cwd=BENCHMARKS,
        text=True,
        capture_output=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert "through A2A on loopback" in result.stderr
    for figure in ("added p50, caller blocking", "added p50, caller awaiting", "load average"):
        assert figure in result.stdout
