"""``adk-rx create NAME [--model M]``: the folder it writes runs, tests and evaluates offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_run import _env, adk_rx

QUESTION = "What is the weather in Paris?"


def test_a_created_folder_runs_tests_and_evaluates_offline(tmp_path: Path):
    created = adk_rx(tmp_path, "create", "weather_desk")
    assert created.returncode == 0, created.stderr
    folder = tmp_path / "weather_desk"
    assert {p.name for p in folder.iterdir()} >= {
        "__init__.py", "agent.py", "tools.py", "test_agent.py", "evals", "trajectory.jsonl",
    }  # fmt: skip
    assert "adk-rx run weather_desk" in created.stdout

    ran = adk_rx(tmp_path, "run", "weather_desk", "--in-memory", "-m", QUESTION)
    chatted = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", "weather_desk", "--in-memory"],
        cwd=tmp_path, env=_env(), text=True, capture_output=True, timeout=60,
        input=f"{QUESTION}\n{QUESTION}\n",
    )  # fmt: skip
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "weather_desk"],
        cwd=tmp_path, env=_env(), text=True, capture_output=True, timeout=120,
    )  # fmt: skip
    evaluated = adk_rx(tmp_path, "eval", "weather_desk", "weather_desk/evals")

    assert ran.returncode == 0, ran.stderr
    assert '→ weather_desk calls get_weather(city="Paris")' in ran.stdout
    assert "weather_desk: It is sunny in Paris, 21 °C." in ran.stdout
    assert chatted.returncode == 0 and chatted.stdout.count("sunny in Paris, 21 °C.") >= 2
    assert "Error" not in chatted.stderr
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert "1 of 1 cases passed" in evaluated.stdout


def test_model_flag_names_the_model_and_keeps_the_recording_for_replay(tmp_path: Path):
    created = adk_rx(tmp_path, "create", "gemini_desk", "--model", "gemini-2.5-flash")
    assert created.returncode == 0, created.stderr

    agent_source = (tmp_path / "gemini_desk" / "agent.py").read_text()
    replayed = adk_rx(
        tmp_path, "run", "gemini_desk", "--in-memory", "--replay", "gemini_desk/trajectory.jsonl",
        "-m", QUESTION,
    )  # fmt: skip

    assert "MODEL = 'gemini-2.5-flash'" in agent_source
    assert replayed.returncode == 0, replayed.stderr
    assert "gemini_desk: It is sunny in Paris, 21 °C." in replayed.stdout


@pytest.mark.parametrize("name", ["my-agent", "2fast", "a b"])
def test_a_name_that_is_not_an_identifier_exits_2(tmp_path: Path, name: str):
    done = adk_rx(tmp_path, "create", name)

    assert done.returncode == 2
    assert "not a Python identifier" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_never_overwritten(tmp_path: Path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "agent.py").write_text("# mine\n")

    done = adk_rx(tmp_path, "create", "taken")

    assert done.returncode == 2
    assert "exists and is not empty" in done.stderr
    assert (tmp_path / "taken" / "agent.py").read_text() == "# mine\n"
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["agent.py"]
