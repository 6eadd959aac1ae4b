"""``adk-rx eval`` and ``adk-rx bench`` as a user runs them, in subprocesses."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_run import SUPPORT_DESK, _env, adk_rx

EVALS = SUPPORT_DESK / "evals"


def test_eval_on_the_example_passes_and_writes_results(tmp_path: Path) -> None:
    done = adk_rx(tmp_path, "eval", str(SUPPORT_DESK), str(EVALS), "--results-dir", str(tmp_path))

    assert done.returncode == 0, done.stderr
    assert "3 of 3 cases passed" in done.stdout
    [written] = tmp_path.glob("*.evalset_result.json")
    results = json.loads(written.read_text())
    assert results["eval_set_id"] == "support_desk"
    assert [c["final_eval_status"] for c in results["eval_case_results"]] == [1, 1, 1]
    metrics = results["eval_case_results"][0]["overall_eval_metric_results"]
    assert {m["metric_name"] for m in metrics} == {
        "tool_trajectory_avg_score",
        "response_match_score",
    }


def test_eval_exits_1_on_a_changed_expectation_and_shows_the_details(tmp_path: Path) -> None:
    data = json.loads((EVALS / "support_desk.evalset.json").read_text())
    data["eval_cases"][0]["conversation"][0]["intermediate_data"]["tool_uses"][1]["args"] = {
        "order_id": "4321"
    }
    changed = tmp_path / "changed.evalset.json"
    changed.write_text(json.dumps(data))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))

    done = adk_rx(
        tmp_path, "eval", str(SUPPORT_DESK), str(changed), "--config", str(config),
        "--print-detailed-results",
    )  # fmt: skip

    assert done.returncode == 1, done.stderr
    assert "2 of 3 cases passed" in done.stdout
    assert 'lookup_order({"order_id": "4321"})' in done.stdout
    assert 'lookup_order({"order_id": "1234"})' in done.stdout
    assert (tmp_path / "support_desk.evalset_result.json").is_file()


def test_eval_with_a_missing_eval_set_is_a_usage_error(tmp_path: Path) -> None:
    done = adk_rx(tmp_path, "eval", str(SUPPORT_DESK), str(tmp_path / "nope.evalset.json"))

    assert done.returncode == 2
    assert "no such eval set" in done.stderr


def test_bench_reports_figures_as_json_and_a_png_without_a_progress_bar_when_piped(
    tmp_path: Path,
) -> None:
    pytest.importorskip("matplotlib")
    out, png = tmp_path / "bench.json", tmp_path / "bench.png"

    done = adk_rx(
        tmp_path, "bench", str(SUPPORT_DESK), "-n", "12", "-c", "3",
        "-m", "Where is my order 1234?", "--json", str(out), "--plot", str(png),
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["turns"] == 12 and figures["concurrency"] == 3 and figures["errors"] == 0
    assert figures["events"] == 12 * 8  # every turn replays the recorded trajectory
    for key in ("time_to_first_event_ms", "latency_ms"):
        p = figures[key]
        assert 0 < p["p50"] <= p["p95"] <= p["p99"]
    assert figures["turns_per_second"] > 0 and figures["cpu_ms_per_turn"] > 0
    assert len(figures["timings"]) == 12
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "turns/s" in done.stdout
    assert "━" not in done.stderr and done.stderr.strip() == ""


def test_bench_counts_failed_turns_and_exits_1(tmp_path: Path) -> None:
    # --replay serves the recording without the demo's fallback answer: the turns fail.
    replay = str(SUPPORT_DESK / "trajectory.jsonl")
    done = adk_rx(
        tmp_path, "bench", str(SUPPORT_DESK), "-n", "3", "-m", "not recorded", "--replay", replay
    )

    assert done.returncode in (1, 2)
    assert "ReplayMismatchError" in done.stderr


def test_bench_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_rx.cli", "bench", str(SUPPORT_DESK), "-n", "30",
         "-m", "Where is my order 1234?"],
        cwd=tmp_path, env={**_env(), "COLUMNS": "100"}, stdout=subprocess.DEVNULL,
        stderr=secondary, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(secondary)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([primary], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
    finally:
        process.wait(timeout=60)
        os.close(primary)

    assert process.returncode == 0
    assert b"turns" in seen and b"/30" in seen


def _without(module: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``adk-rx ARGS`` in a Python where ``module`` cannot be imported (as if not installed)."""
    blocked = (
        f"import sys; sys.modules[{module!r}] = None; "
        "from adk_rx.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", blocked, *args],
        cwd=cwd, env=_env(), text=True, capture_output=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_bench_plot_without_matplotlib_names_the_extra_to_install(tmp_path: Path) -> None:
    done = _without("matplotlib", tmp_path, "bench", str(SUPPORT_DESK), "--plot", "out.png")

    assert done.returncode == 2
    assert "pip install 'adk_rx[plot]'" in done.stderr  # the brackets are not eaten as markup


def test_a_message_with_brackets_reaches_the_terminal_whole(tmp_path: Path) -> None:
    done = adk_rx(tmp_path, "eval", str(SUPPORT_DESK), "[bold]nope[/bold].evalset.json")

    assert done.returncode == 2
    assert "[bold]nope[/bold].evalset.json" in done.stderr


def test_bench_defaults_to_a_message_the_offline_example_answers(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"

    done = adk_rx(tmp_path, "bench", str(SUPPORT_DESK), "-n", "3", "--json", str(out))

    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["message"] == "Where is my order 1234?" and figures["errors"] == 0


def test_the_throughput_plot_of_a_short_run_has_no_empty_windows() -> None:
    from adk_rx.cli.bench import BenchResult, TurnTiming
    from adk_rx.cli.bench_plot import throughput

    ends = [0.1, 0.2, 0.3, 0.4]  # the last turn ends the run
    timings = [TurnTiming(start=e - 0.1, first=e - 0.05, end=e, events=1) for e in ends]
    result = BenchResult("a", 4, 1, "m", wall_seconds=0.4, cpu_seconds=0.1, timings=timings)

    centres, rates = throughput(result)

    assert centres == [0.2] and rates == [10.0]
    long = [TurnTiming(start=i / 100, first=None, end=(i + 1) / 100, events=1) for i in range(100)]
    result = BenchResult("a", 100, 1, "m", wall_seconds=1.0, cpu_seconds=0.1, timings=long)
    centres, rates = throughput(result)
    assert len(rates) == 20 and min(rates) > 0
    assert sum(rate * 0.05 for rate in rates) == pytest.approx(100)
