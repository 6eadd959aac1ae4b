"""benchmarks/memory_search.py runs (on a small store) and prints its figures with the load."""

from __future__ import annotations

import subprocess
import sys

import pytest

from adk_rx.memory.vector_sqlite import sqlite_vec_driver
from tests.benchmarks.test_report import BENCHMARKS


@pytest.mark.skipif(sqlite_vec_driver() is None, reason='needs pip install "adk_rx[vector]"')
def test_a_small_run_prints_the_search_and_add_figures() -> None:
    result = subprocess.run(
        [sys.executable, "memory_search.py", "--memories", "3000", "--queries", "5", "--adds", "2"],
        cwd=BENCHMARKS,
        text=True,
        capture_output=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert "... 5 searches" in result.stderr
    assert "load average (1, 5, 15 min)" in result.stdout
    for figure in ("search p50 (ms)", "source found in top 10: search", "add 50-event session"):
        assert figure in result.stdout
