"""benchmarks/context_cache.py runs and prints its figures with the load."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.test_report import BENCHMARKS


def test_a_short_run_prints_the_byte_saving_and_its_verdict() -> None:
    result = subprocess.run(
        [sys.executable, "context_cache.py", "--turns", "20"],
        cwd=BENCHMARKS,
        text=True,
        capture_output=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert "... 20 turns with ContextCacheConfig" in result.stderr
    assert "load average" in result.stdout
    saved = next(line for line in result.stdout.splitlines() if line.startswith("request bytes s"))
    assert saved.split()[-1] == "met"
    naming = next(line for line in result.stdout.splitlines() if line.startswith("requests naming"))
    assert naming.split()[-2:] == ["0", "20"]
