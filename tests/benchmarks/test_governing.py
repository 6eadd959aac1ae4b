"""benchmarks/governing.py runs (a few turns) and prints its figures with the load."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.test_report import BENCHMARKS


def test_a_small_run_prints_the_bulkhead_and_budget_figures() -> None:
    result = subprocess.run(
        [sys.executable, "governing.py", "--turns", "20"],
        cwd=BENCHMARKS,
        text=True,
        capture_output=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    most = next(line for line in lines if "most at once" in line)
    assert most.split()[-4:] == ["1", "<=", "1", "met"]
    assert any("first come first served" in line and "True" in line for line in lines)
    assert "load average" in result.stdout
