"""The benchmark scripts' reporting: progress on stderr, verdicts, quoted references."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from report import verdict  # noqa: E402


def test_a_verdict_per_aim() -> None:
    assert verdict(50.0, "<= 100 us") == "met"
    assert verdict(2.0, "<= 1.5x") == "MISSED"
    assert verdict(400_000.0, ">= 300,000") == "met"
    assert verdict(0.3, "<= 0.25") == "MISSED"
    assert verdict(7.0, "") == ""


def test_a_short_run_shows_progress_and_marks_google_adk_figures_as_quoted() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "tool_turn.py"), "--turns", "20"],
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "... 20 tool turns: run 1/5" in result.stderr
    assert "... 20 tool turns: run 5/5" in result.stderr
    assert "wall us/turn" in result.stdout and "..." not in result.stdout
    assert "4863  (quoted, not measured)" in result.stdout
    assert "this run did not measure them" in result.stdout
