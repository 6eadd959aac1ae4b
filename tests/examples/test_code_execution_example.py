"""The code-execution example answers its data question offline, from the code's real output."""

from __future__ import annotations

import json

from tests.examples.test_examples import EXAMPLES, run

QUESTION = "Which region sold the most?"


def test_the_analyst_runs_code_on_the_spreadsheet_and_answers_from_its_output() -> None:
    out = run(
        "-m", "adk_rx.cli", "run", str(EXAMPLES / "sales_analyst"), "-m", QUESTION,
        "--in-memory", "--jsonl",
    )  # fmt: skip
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    parts = [p for e in events for p in (e.get("content") or {}).get("parts", [])]
    codes = [p["executableCode"]["code"] for p in parts if "executableCode" in p]
    results = [p["codeExecutionResult"] for p in parts if "codeExecutionResult" in p]
    assert len(codes) == 1 and 'open("sales.csv")' in codes[0]
    assert results[0]["outcome"] == "OUTCOME_OK"
    assert "West: 1164.90\nSouth: 1035.80\nEast: 659.20\nNorth: 598.50" in results[0]["output"]
    saved = [e["actions"]["artifactDelta"] for e in events if e["actions"].get("artifactDelta")]
    assert {"totals.csv": 0} in saved
    assert events[-1]["content"]["parts"][0]["text"].startswith(
        "West sold the most: 1164.90 in revenue."
    )


def test_the_console_shows_the_code_and_its_output() -> None:
    out = run(
        "-m", "adk_rx.cli", "run", str(EXAMPLES / "sales_analyst"), "-m", QUESTION, "--in-memory"
    )  # fmt: skip
    assert "⌘ analyst runs code:" in out
    assert "← code output:" in out and "│ West: 1164.90" in out
    assert "analyst: West sold the most" in out
