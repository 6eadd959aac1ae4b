"""``adk-rx run`` through subprocesses (``python -m adk_rx.cli``) in a temporary folder."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from adk_rx import Event, SqlSessionService

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "examples" / "support_desk"
SLOW_AGENT = Path(__file__).with_name("slow_agent.py")
TRANSFER_AGENT = Path(__file__).with_name("transfer_agent.py")
_PROVIDER_ENV = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ADK_RX_MODEL",
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    env["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def adk_rx(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", *args],
        cwd=cwd,
        env=_env(),
        text=True,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def slowpoke(tmp_path: Path) -> Path:
    """An agents folder in tmp with the app ``slowpoke`` (see slow_agent.py)."""
    app = tmp_path / "agents" / "slowpoke"
    app.mkdir(parents=True)
    shutil.copy(SLOW_AGENT, app / "agent.py")
    return app


def stored_events(cwd: Path, app: str, user: str, session: str) -> list[Event]:
    service = SqlSessionService(f"sqlite:///{cwd / '.adk_rx' / 'sessions.db'}")
    try:
        found = service.get_session(app_name=app, user_id=user, session_id=session).run()
        return list(found.events)
    finally:
        service.close()


def test_one_shot_on_the_support_desk_example_answers_offline_and_exits_0(tmp_path: Path):
    result = adk_rx(tmp_path, "run", str(SUPPORT_DESK), "-m", "Where is my order 1234?")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "shipping: Order 1234 shipped with DHL" in out
    assert '→ shipping calls lookup_order(order_id="1234")' in out
    assert "⇢ transfer to shipping" in out
    assert "state shipping_answer" in out
    assert "3 model calls · 2 tool calls" in out
    assert (tmp_path / ".adk_rx" / "sessions.db").is_file()


def test_jsonl_prints_only_event_json_lines(tmp_path: Path):
    result = adk_rx(
        tmp_path,
        "run",
        str(SUPPORT_DESK),
        "--jsonl",
        "--in-memory",
        "-m",
        "Where is my order 1234?",
    )

    assert result.returncode == 0, result.stderr
    events = [Event.from_json(line) for line in result.stdout.splitlines()]
    assert [e.author for e in events if not e.partial] == [
        "support_root",
        "support_root",
        "shipping",
        "shipping",
        "shipping",
    ]
    assert any(e.partial for e in events)  # the answer streamed
    assert events[-1].is_final_response()
    assert "arrive on 3 December 2026" in events[-1].text()
    assert "turn:" in result.stderr
    assert not (tmp_path / ".adk_rx").exists()  # --in-memory stores nothing


def test_replay_flag_serves_a_recording_to_an_agent_with_a_model_name(tmp_path: Path):
    result = adk_rx(
        tmp_path,
        "run",
        str(SUPPORT_DESK),
        "--in-memory",
        "-m",
        "Where is my order 1234?",
        "--replay",
        str(SUPPORT_DESK / "trajectory.jsonl"),
    )

    assert result.returncode == 0, result.stderr
    assert "arrive on 3 December 2026" in result.stdout


def test_model_flag_refuses_an_agent_built_with_a_model_object(slowpoke: Path):
    result = adk_rx(
        slowpoke.parent,
        "run",
        "slowpoke",
        "--in-memory",
        "-m",
        "hi",
        "--replay",
        str(SUPPORT_DESK / "trajectory.jsonl"),
    )

    assert result.returncode == 2
    assert "cannot replace the model object of: slowpoke (SlowLlm)" in result.stderr


def test_failing_run_exits_1_with_the_error_on_stderr(slowpoke: Path):
    result = adk_rx(slowpoke.parent, "run", "slowpoke", "--in-memory", "-m", "please fail")

    assert result.returncode == 1
    assert "the model is down" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_mismatch_fails_with_a_diff(tmp_path: Path):
    # --replay serves the recording without the demo's fallback answer.
    replay = str(SUPPORT_DESK / "trajectory.jsonl")
    result = adk_rx(
        tmp_path, "run", str(SUPPORT_DESK), "--in-memory", "--replay", replay, "-m", "Hello there"
    )

    assert result.returncode == 1
    assert "no recorded call matches this request" in result.stderr
    assert "+" in result.stderr and "Hello there" in result.stderr


def test_an_agent_that_cannot_be_loaded_exits_2_with_a_clear_message(tmp_path: Path):
    app = tmp_path / "broken_app"  # the loader's other messages: test_loader.py
    app.mkdir()
    (app / "agent.py").write_text("import no_such_dependency\n")

    result = adk_rx(tmp_path, "run", "broken_app", "--in-memory", "-m", "hi")

    assert result.returncode == 2
    assert "broken_app/agent.py failed" in result.stderr
    assert "No module named 'no_such_dependency'" in result.stderr


def test_an_agent_that_raises_on_import_shows_the_traceback_from_its_own_file(tmp_path: Path):
    app = tmp_path / "raising_app"
    app.mkdir()
    (app / "agent.py").write_text(
        "def settings():\n    return {}['MODEL']\n\n\nMODEL = settings()\n"
    )

    result = adk_rx(tmp_path, "run", "raising_app", "--in-memory", "-m", "hi")

    assert result.returncode == 2
    err = result.stderr
    agent_py = str((app / "agent.py").resolve())
    assert err.startswith("Traceback (most recent call last):")
    assert f'File "{agent_py}", line 5, in <module>' in err
    assert f'File "{agent_py}", line 2, in settings' in err
    assert "KeyError: 'MODEL'" in err
    assert "loader.py" not in err and "importlib" not in err


def test_sigint_during_a_stream_cancels_and_leaves_a_valid_session(slowpoke: Path):
    cwd = slowpoke.parent
    ids = ["--user-id", "u1", "--session-id", "s1"]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adk_rx.cli",
            "run",
            "slowpoke",
            "--jsonl",
            *ids,
            "--create",
            "-m",
            "go slow",
        ],
        cwd=cwd,
        env=_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        first = process.stdout.readline() if process.stdout else ""
        assert Event.from_json(first).partial  # the stream is running
        process.send_signal(signal.SIGINT)
        rest = process.stdout.read() if process.stdout else ""  # same reader: keeps read-ahead
        process.wait(timeout=30)
        err = process.stderr.read() if process.stderr else ""
    finally:
        process.kill()

    assert process.returncode == 130, err
    printed = [Event.from_json(line) for line in rest.splitlines()]
    assert printed[-1].error_code == "CANCELLED"  # the stored record is shown too
    stored = stored_events(cwd, "slowpoke", "u1", "s1")
    assert [e.author for e in stored] == ["user", "slowpoke"]
    assert stored[-1].error_code == "CANCELLED"
    assert not any(e.partial for e in stored)

    again = adk_rx(cwd, "run", "slowpoke", *ids, "-m", "hello again")

    assert again.returncode == 0, again.stderr
    assert "slowpoke: echo: hello again" in again.stdout
    stored = stored_events(cwd, "slowpoke", "u1", "s1")
    assert [e.text() for e in stored[-2:]] == ["hello again", "echo: hello again"]


def test_session_id_resumes_a_stored_session(slowpoke: Path):
    cwd = slowpoke.parent
    ids = ["--user-id", "ada", "--session-id", "resume-me"]
    assert adk_rx(cwd, "run", "slowpoke", *ids, "--create", "-m", "one").returncode == 0
    assert adk_rx(cwd, "run", "slowpoke", *ids, "-m", "two").returncode == 0

    stored = stored_events(cwd, "slowpoke", "ada", "resume-me")

    assert [e.text() for e in stored] == ["one", "echo: one", "two", "echo: two"]


def test_interactive_chat_reads_turns_until_eof_and_asks_for_confirmations(tmp_path: Path):
    script = "Please refund order 1234, it arrived broken.\ny\n"
    result = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", str(SUPPORT_DESK), "--in-memory"],
        cwd=tmp_path,
        env=_env(),
        text=True,
        capture_output=True,
        input=script,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "? billing asks to confirm issue_refund(" in out
    assert "approve issue_refund? [y/N]" in out
    assert '← issue_refund: {"status": "refunded"' in out
    assert "artifact receipt-R-1234-1.txt (version 0)" in out
    assert "billing: Done: 59.90 EUR for order 1234" in out


def _read_until(stream, marker: str) -> str:
    """Reads stdout a character at a time until ``marker`` shows (streamed text has no newline)."""
    seen = ""
    while marker not in seen:
        char = stream.read(1)
        assert char, f"stdout ended before {marker!r}: {seen!r}"
        seen += char
    return seen


def test_interactive_ctrl_c_cancels_the_turn_and_returns_to_the_prompt(slowpoke: Path):
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_rx.cli", "run", "slowpoke", "--in-memory"],
        cwd=slowpoke.parent,
        env=_env(),
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("go slow\n")
        process.stdin.flush()
        _read_until(process.stdout, "slowpoke: chunk0")
        process.send_signal(signal.SIGINT)
        cancelled = _read_until(process.stdout, "CANCELLED")
        process.stdin.write("hello\n")
        process.stdin.close()  # EOF at the prompt: exit
        rest = process.stdout.read()  # the same reader: its read-ahead holds the next lines
        process.wait(timeout=30)
        err = process.stderr.read() if process.stderr else ""
    finally:
        process.kill()

    assert process.returncode == 0, err
    out = cancelled + rest
    assert "✗ slowpoke: CANCELLED invocation cancelled" in out
    assert out.index("CANCELLED") < out.index("slowpoke: echo: hello")


# -- resuming a session ---------------------------------------------------------------------


def test_an_unknown_session_id_exits_2_unless_create_is_given(slowpoke: Path):
    cwd = slowpoke.parent
    ids = ["--user-id", "ada", "--session-id", "nope"]
    assert adk_rx(cwd, "run", "slowpoke", *ids, "--create", "-m", "one").returncode == 0

    result = adk_rx(cwd, "run", "slowpoke", "--user-id", "ada", "--session-id", "typo", "-m", "x")

    assert result.returncode == 2
    assert "no session 'typo' of user 'ada' in app 'slowpoke'" in result.stderr
    assert "newest first: nope" in result.stderr and "--create" in result.stderr
    assert stored_events(cwd, "slowpoke", "ada", "nope")[0].text() == "one"
    service = SqlSessionService(f"sqlite:///{cwd / '.adk_rx' / 'sessions.db'}")
    try:
        listed = service.list_sessions(app_name="slowpoke", user_id="ada").run().sessions
    finally:
        service.close()
    assert [s.id for s in listed] == ["nope"]  # the typo created nothing


def test_resuming_shows_history_and_asks_for_the_pending_confirmation(tmp_path: Path):
    ids = ["--user-id", "ada", "--session-id", "refund"]
    asked = adk_rx(
        tmp_path,
        "run",
        str(SUPPORT_DESK),
        *ids,
        "--create",
        "-m",
        "Please refund order 1234, it arrived broken.",
    )
    assert asked.returncode == 0, asked.stderr
    assert f"answer it with adk-rx run {SUPPORT_DESK} --session-id refund" in asked.stderr

    resumed = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", str(SUPPORT_DESK), *ids],
        cwd=tmp_path,
        env=_env(),
        text=True,
        capture_output=True,
        input="y\n",
        timeout=60,
    )

    assert resumed.returncode == 0, resumed.stderr
    assert "resumed session refund: 9 events" in resumed.stderr
    assert "you: Please refund order 1234, it arrived broken." in resumed.stderr
    assert "billing: I need your approval to refund 59.90 EUR" in resumed.stderr
    assert "approve issue_refund? [y/N]" in resumed.stdout
    assert '← issue_refund: {"status": "refunded"' in resumed.stdout
    assert "billing: Done: 59.90 EUR for order 1234" in resumed.stdout
    stored = stored_events(tmp_path, "support_desk", "ada", "refund")
    answer = stored[9].get_function_responses()[0]
    assert (answer.name, answer.response) == ("adk_request_confirmation", {"confirmed": True})
    assert stored[-1].text().startswith("Done: 59.90 EUR")


def test_ctrl_c_after_a_transfer_keeps_the_conversation_with_the_new_agent(tmp_path: Path):
    app = tmp_path / "agents" / "desk"
    app.mkdir(parents=True)
    shutil.copy(TRANSFER_AGENT, app / "agent.py")
    cwd = app.parent
    ids = ["--user-id", "u1", "--session-id", "s1"]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adk_rx.cli",
            "run",
            "desk",
            "--jsonl",
            *ids,
            "--create",
            "-m",
            "go slow",
        ],
        cwd=cwd,
        env=_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        while True:  # until helper streams
            line = process.stdout.readline()
            assert line, "the run ended before helper streamed"
            event = Event.from_json(line)
            if event.partial and event.author == "helper":
                break
        process.send_signal(signal.SIGINT)
        process.stdout.read()
        process.wait(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130
    assert stored_events(cwd, "desk", "u1", "s1")[-1].error_code == "CANCELLED"

    again = adk_rx(cwd, "run", "desk", *ids, "-m", "hello again")

    assert again.returncode == 0, again.stderr
    assert "helper: echo: hello again" in again.stdout
    last_turn = stored_events(cwd, "desk", "u1", "s1")
    last_turn = last_turn[[e.text() for e in last_turn].index("hello again") + 1 :]
    assert [e.author for e in last_turn] == ["helper"]  # no detour through front_desk
