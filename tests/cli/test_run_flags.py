"""``adk-rx run`` flags: --state, --timeout, --log-level, --save-session / --resume, Ctrl-C at
the prompt, the resume hint under --in-memory, the default user id (subprocesses)."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from adk_rx import SqlSessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server
from tests.cli.test_run import REPO, SLOW_AGENT, SUPPORT_DESK, _env, _read_until, adk_rx

STATE_AGENT = Path(__file__).with_name("state_agent.py")
DURABLE_APP = REPO / "examples" / "durable_app.py"


@pytest.fixture
def stateful(tmp_path: Path) -> Path:
    """An agents folder in tmp with the app ``stateful`` (see state_agent.py)."""
    app = tmp_path / "agents" / "stateful"
    app.mkdir(parents=True)
    shutil.copy(STATE_AGENT, app / "agent.py")
    return app


def chat(cwd: Path, *args: str, lines: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "run", *args],
        cwd=cwd,
        env=_env(),
        text=True,
        capture_output=True,
        input=lines,
        timeout=60,
    )


def stored(cwd: Path, app: str, user: str = "user") -> list:
    service = SqlSessionService(f"sqlite:///{cwd / '.adk_rx' / 'sessions.db'}")
    try:
        listed = service.list_sessions(app_name=app, user_id=user).run().sessions
        return [
            service.get_session(app_name=app, user_id=user, session_id=s.id).run() for s in listed
        ]
    finally:
        service.close()


# -- --state, --log-level, --timeout --------------------------------------------------------


def test_state_is_the_new_sessions_initial_state(stateful: Path):
    done = adk_rx(stateful.parent, "run", "stateful", "-m", "hi", "--state", '{"name": "Ada"}')

    assert done.returncode == 0, done.stderr
    assert "stateful: hi -> name=Ada turns=1" in done.stdout
    [session] = stored(stateful.parent, "stateful")
    assert session.state == {"name": "Ada", "turns": 1}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--state", "{not json"), "--state is not valid JSON"),
        (("--state", "[1, 2]"), "--state must be a JSON object"),
        (("--state", "{}", "--session-id", "s1"), "--state is the state of a new session"),
        (("--timeout", "soon"), "--timeout 'soon'"),
        (("--timeout", "0"), "give a positive number of seconds"),
        (("--resume", "s.json", "--session-id", "s1"), "--resume starts a new session"),
    ],
)
def test_bad_flags_exit_2_with_the_reason(stateful: Path, flags: tuple[str, ...], message: str):
    done = adk_rx(stateful.parent, "run", "stateful", "-m", "hi", *flags)

    assert done.returncode == 2
    assert message in done.stderr


def test_log_level_shows_the_agents_info_lines(stateful: Path):
    quiet = adk_rx(stateful.parent, "run", "stateful", "--in-memory", "-m", "hi")
    loud = adk_rx(
        stateful.parent, "run", "stateful", "--in-memory", "-m", "hi", "--log-level", "info"
    )

    assert "state_agent imported" not in quiet.stderr
    assert "state_agent: state_agent imported" in loud.stderr
    assert loud.returncode == quiet.returncode == 0


def test_timeout_cancels_a_slow_turn_and_the_chat_goes_on(tmp_path: Path):
    app = tmp_path / "agents" / "slowpoke"
    app.mkdir(parents=True)
    shutil.copy(SLOW_AGENT, app / "agent.py")

    one_shot = adk_rx(
        app.parent, "run", "slowpoke", "--in-memory", "--timeout", "0.3", "-m", "slow"
    )
    chatted = chat(app.parent, "slowpoke", "--in-memory", "--timeout", "1s", lines="slow\nhello\n")

    assert one_shot.returncode == 1
    assert "TIMEOUT" in one_shot.stdout
    assert "InvocationTimeoutError" in one_shot.stderr
    assert chatted.returncode == 0, chatted.stderr
    out = chatted.stdout
    assert out.index("TIMEOUT") < out.index("slowpoke: echo: hello")


# -- Ctrl-C at the prompt, the default user -------------------------------------------------


def test_ctrl_c_at_the_prompt_exits_130_and_eof_exits_0(stateful: Path):
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_rx.cli", "run", "stateful", "--in-memory"],
        cwd=stateful.parent,
        env=_env(),
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("hi\n")
        process.stdin.flush()
        _read_until(process.stdout, "model call")  # the turn ended: back at the prompt
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    finally:
        process.kill()

    assert process.returncode == 130
    assert chat(stateful.parent, "stateful", "--in-memory", lines="hi\n").returncode == 0


def test_a_session_made_by_run_shows_in_the_web_server_of_the_same_folder(stateful: Path):
    cwd = stateful.parent.parent
    done = adk_rx(cwd, "run", "agents/stateful", "-m", "hi")
    assert done.returncode == 0, done.stderr
    assert "of user user in" in done.stderr

    server = create_app(stateful.parent, web=True, data_dir=cwd / ".adk_rx")
    with live_server(server) as live:
        listed = httpx.get(f"{live.url}/apps/stateful/users/user/sessions", timeout=10).json()

    assert len(listed) == 1 and listed[0]["state"]["turns"] == 1


# -- --save-session / --resume --------------------------------------------------------------


def test_a_saved_session_resumes_with_its_state_and_history(stateful: Path):
    cwd = stateful.parent
    saved = cwd / "saved.json"
    first = adk_rx(
        cwd, "run", "stateful", "--in-memory", "-m", "hi", "--state", '{"name": "Ada"}',
        "--save-session", str(saved),
    )  # fmt: skip
    resumed = adk_rx(cwd, "run", "stateful", "--resume", str(saved), "-m", "again")

    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    assert f"session saved to {saved}" in first.stderr
    body = json.loads(saved.read_text())
    assert set(body) == {"id", "appName", "userId", "state", "events", "lastUpdateTime"}
    assert body["state"] == {"name": "Ada", "turns": 1} and body["userId"] == "user"
    assert "you: hi" in resumed.stderr  # the history is shown
    assert "stateful: again -> name=Ada turns=2" in resumed.stdout
    [session] = stored(cwd, "stateful")
    assert session.id != body["id"]  # a new session holding the file's events
    kept = [e["id"] for e in body["events"]]
    assert [e.id for e in session.events][: len(kept)] == kept


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "is not JSON"),
        ("[1]", "does not hold a session object"),
        ('{"events": {}}', "events a list"),
        ('{"events": [1]}', "event 1 is not an object"),
        ('{"events": [{"author": 5}]}', "event 1 is not an event"),
    ],
)
def test_a_broken_session_file_exits_2_and_stores_nothing(stateful: Path, text: str, message: str):
    (stateful.parent / "bad.json").write_text(text)

    done = adk_rx(stateful.parent, "run", "stateful", "--resume", "bad.json", "-m", "hi")

    assert done.returncode == 2
    assert message in done.stderr
    assert not (stateful.parent / ".adk_rx" / "sessions.db").exists() or not stored(
        stateful.parent, "stateful"
    )


def test_in_memory_hint_does_not_point_at_a_session_that_is_gone(tmp_path: Path):
    lost = adk_rx(tmp_path, "run", str(DURABLE_APP), "--in-memory", "-m", "Refund order 1234")
    saved = tmp_path / "paused.json"
    kept = adk_rx(
        tmp_path, "run", str(DURABLE_APP), "--in-memory", "--save-session", str(saved),
        "-m", "Refund order 1234",
    )  # fmt: skip
    answered = chat(
        tmp_path, str(DURABLE_APP), "--in-memory", "--resume", str(saved),
        lines='{"approved": true}\n',
    )  # fmt: skip

    assert "--session-id" not in lost.stderr
    assert "the session was in memory and is gone" in lost.stderr
    assert f"answer it with adk-rx run {DURABLE_APP} --resume {saved}" in kept.stderr
    assert answered.returncode == 0, answered.stderr
    assert "notify: Customer notified." in answered.stdout


# -- google-adk's session files (oracle) ----------------------------------------------------


def test_a_session_saved_by_adk_rx_loads_in_google_adk_as_its_run_cli_loads_it(tmp_path: Path):
    from google.adk.events._internal_metadata import mark_restored
    from google.adk.sessions import InMemorySessionService, Session

    saved = tmp_path / "refund.json"
    done = chat(
        tmp_path, str(SUPPORT_DESK), "--in-memory", "--save-session", str(saved),
        lines="Please refund order 1234, it arrived broken.\ny\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ours = json.loads(saved.read_text())

    async def load() -> Session | None:
        # What google-adk's `adk run --resume FILE` does with the file (cli.run_cli).
        loaded = Session.model_validate_json(saved.read_text())
        service = InMemorySessionService()
        session = await service.create_session(
            app_name="support_desk", user_id="test_user", state=loaded.state
        )
        for event in loaded.events:
            await service.append_event(session, mark_restored(event))
        return await service.get_session(
            app_name="support_desk", user_id="test_user", session_id=session.id
        )

    theirs = asyncio.run(load())

    assert theirs is not None
    assert theirs.state == ours["state"]
    assert [e.id for e in theirs.events] == [e["id"] for e in ours["events"]]
    calls = [c.name for e in theirs.events for c in e.get_function_calls()]
    assert "adk_request_confirmation" in calls and "issue_refund" in calls
    assert theirs.events[-1].content is not None
    assert "Done: 59.90 EUR" in ((theirs.events[-1].content.parts or [])[0].text or "")


def test_a_session_saved_by_google_adk_resumes_in_adk_rx(stateful: Path):
    from google.adk.events import Event as AdkEvent
    from google.adk.events import EventActions
    from google.adk.events._internal_metadata import public_session
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    async def saved_by_google_adk() -> str:
        service = InMemorySessionService()
        session = await service.create_session(
            app_name="stateful", user_id="test_user", state={"name": "Grace"}
        )
        said = [
            ("user", "hi", None),
            ("stateful", "hi -> name=Grace turns=1", {"turns": 1}),
        ]
        for author, text, delta in said:
            role = "user" if author == "user" else "model"
            event = AdkEvent(
                invocation_id="e-1",
                author=author,
                content=types.Content(role=role, parts=[types.Part(text=text)]),
                actions=EventActions(state_delta=delta or {}),
            )
            await service.append_event(session, event)
        stored_session = await service.get_session(
            app_name="stateful", user_id="test_user", session_id=session.id
        )
        assert stored_session is not None
        # As google-adk's run_cli writes --save_session.
        return public_session(stored_session).model_dump_json(
            indent=2, exclude_none=True, by_alias=True
        )

    cwd = stateful.parent
    (cwd / "grace.session.json").write_text(asyncio.run(saved_by_google_adk()))
    theirs = json.loads((cwd / "grace.session.json").read_text())

    done = adk_rx(cwd, "run", "stateful", "--resume", "grace.session.json", "-m", "again")

    assert done.returncode == 0, done.stderr
    assert "you: hi" in done.stderr
    assert "stateful: again -> name=Grace turns=2" in done.stdout
    [session] = stored(cwd, "stateful")
    kept = [e["id"] for e in theirs["events"]]
    assert [e.id for e in session.events][: len(kept)] == kept
    assert session.state == {"name": "Grace", "turns": 2}
