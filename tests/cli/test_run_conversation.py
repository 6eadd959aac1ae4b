"""The offline support desk holds a conversation in ``adk-rx run`` (a subprocess per chat)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_run import SUPPORT_DESK, _env

WHERE = "Where is my order 1234?"
REFUND = "Please refund order 1234, it arrived broken."
SHIPPED = "Order 1234 shipped with DHL"
DONE = "Done: 59.90 EUR for order 1234"


def chat(cwd: Path, *lines: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", str(SUPPORT_DESK), "--in-memory"],
        cwd=cwd,
        env=_env(),
        text=True,
        capture_output=True,
        input="".join(f"{line}\n" for line in lines),
        timeout=60,
    )


@pytest.mark.parametrize(
    ("lines", "answers"),
    [
        ((WHERE, REFUND, "y"), [SHIPPED, DONE]),
        ((REFUND, "y", WHERE), [DONE, SHIPPED]),
        ((WHERE, WHERE, REFUND, "y", REFUND), [SHIPPED, SHIPPED, DONE, "refunded already"]),
    ],
    ids=["where-then-refund", "refund-then-where", "each-twice"],
)
def test_the_recorded_questions_are_answered_in_one_session_in_any_order(
    tmp_path: Path, lines: tuple[str, ...], answers: list[str]
):
    result = chat(tmp_path, *lines)

    assert result.returncode == 0, result.stderr
    assert "Error" not in result.stdout + result.stderr
    said = [
        line
        for line in result.stdout.splitlines()
        if line.startswith(("shipping: ", "billing: ")) and "need your approval" not in line
    ]
    assert len(said) == len(answers)
    assert all(answer in line for answer, line in zip(answers, said, strict=True)), said


def test_an_unrecorded_question_lists_the_recorded_ones_and_counts_what_was_served(
    tmp_path: Path,
):
    result = chat(tmp_path, WHERE, "What is your phone number?")

    assert SHIPPED in result.stdout
    assert "ReplayMismatchError" in result.stderr
    # The first question took three recorded calls; the hint invites any order.
    assert re.search(r"\(3 of the \d+ recorded calls served so far\)", result.stderr)
    assert f"  - {WHERE!r}\n  - {REFUND!r}" in result.stderr
    assert "in this order" not in result.stderr
