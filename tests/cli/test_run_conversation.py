"""The offline support desk holds a conversation in ``adk-rx run`` (a subprocess per chat)."""

from __future__ import annotations

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


def test_an_unrecorded_question_is_answered_with_the_recorded_ones_and_the_chat_goes_on(
    tmp_path: Path,
):
    result = chat(tmp_path, WHERE, "What is your phone number?", REFUND, "y")

    assert result.returncode == 0, result.stderr
    assert "Error" not in result.stdout + result.stderr
    assert "offline demo" in result.stdout
    assert f"- {WHERE}" in result.stdout and f"- {REFUND}" in result.stdout
    assert result.stdout.index(SHIPPED) < result.stdout.index("offline demo")
    assert result.stdout.index("offline demo") < result.stdout.index(DONE)
