"""The checks the project keeps clean run with the test suite: ruff (lint and format) on the
code and the tests, basedpyright on the package (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_ruff_finds_no_lint_problem() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "adk_rx", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted_as_ruff_formats_it() -> None:
    result = _run(
        sys.executable, "-m", "ruff", "format", "--check", "adk_rx", "tests", "benchmarks"
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)  # a cold type check of the package takes a minute or two
def test_basedpyright_finds_no_type_error_in_the_package() -> None:
    result = _run(str(BIN / "basedpyright"), "adk_rx")
    assert result.returncode == 0, result.stdout + result.stderr
