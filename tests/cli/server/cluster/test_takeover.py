"""A server killed mid-run: a survivor resumes a resumable app's run, nothing run twice, and
records a plain app's run INTERRUPTED (two real api-server processes, PostgreSQL, Redis)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.cli.server.cluster.test_broker import (
    end_of,
    read_stream,
    sessions_url,
    start,
    stored_events,
)
from tests.cli.server.redis_support import key_prefix, redis_url
from tests.cli.server_process import api_server_process
from tests.cli.server_support import Frame, unique_app
from tests.sessions.postgres import scratch_schema

pytestmark = pytest.mark.timeout(180)

AGENT = Path(__file__).with_name("checkout_agent.py")


def _calls(calls: Path, app: str) -> list[tuple[str, int]]:
    path = calls / f"{app}.log"
    lines = path.read_text().split("\n") if path.exists() else []
    return [(what, int(pid)) for what, pid in (line.split() for line in lines if line)]


def _wait_for(calls: Path, app: str, what: str, count: int = 1) -> None:
    deadline = time.monotonic() + 60
    while sum(1 for line, _ in _calls(calls, app) if line == what) < count:
        assert time.monotonic() < deadline, f"{app} never logged {what}"
        time.sleep(0.05)  # another process's progress, seen only in its file


def _follow(server, app: str, sid: str, iid: str, into: list[Frame]) -> threading.Thread:
    """Reads the invocation's stream through ``server`` to its end, in a thread."""

    def read() -> None:
        into.extend(read_stream(server, app, sid, iid))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_survivor_resumes_a_resumable_run_and_interrupts_a_plain_one(tmp_path: Path) -> None:
    resumable, plain = unique_app("resumable"), unique_app("plain")
    agents, calls = tmp_path / "agents", tmp_path / "calls"
    calls.mkdir()
    for name in (resumable, plain):
        (agents / name).mkdir(parents=True)
        shutil.copy(AGENT, agents / name / "agent.py")
        os.mkfifo(calls / f"{name}.release")
    env = {"CHECKOUT_CALLS": str(calls)}
    with scratch_schema() as database, key_prefix() as prefix, ExitStack() as stack:
        env["ADK_RX_BROKER_PREFIX"] = prefix
        options = ("--session-service-uri", database, "--broker-url", redis_url())
        a, b = (
            stack.enter_context(api_server_process(agents, tmp_path, *options, env=env))
            for _ in range(2)
        )
        http = stack.enter_context(httpx.Client(timeout=30))
        runs: dict[str, str] = {}
        for app in (resumable, plain):
            assert http.post(sessions_url(a, app), json={"session_id": "s"}).status_code == 200
            runs[app] = start(http, a, app, "s", "check out")
        # A reader on B follows the resumable run from its start.
        followed: list[Frame] = []
        reader = _follow(b, resumable, "s", runs[resumable], followed)
        # The plain run has stored its charge call (lookup's call and response, then it).
        seen_plain = read_stream(b, plain, "s", runs[plain], stop_after=3)
        for app in (resumable, plain):
            _wait_for(calls, app, "tool:charge")  # A is inside charge, blocked

        a.process.send_signal(signal.SIGKILL)
        a.process.wait(10)
        # B resumes the run: charge had no response, so it runs again (idempotent), on B.
        _wait_for(calls, resumable, "tool:charge", 2)
        (calls / f"{resumable}.release").write_text("go")
        reader.join(60)
        assert end_of(followed) == {
            "invocation_id": runs[resumable],
            "status": "completed",
            "error": None,
        }

        # The stream B's reader saw: every cursor once, in order, the final answer last.
        ids = [f.id for f in followed if f.id is not None]
        assert ids == list(range(1, len(ids) + 1))
        data = [json.loads(f.data or "") for f in followed if f.id is not None]
        texts = [d["content"]["parts"][0].get("text") for d in data if "content" in d]
        assert texts[-1] == "charged 42"
        stored = stored_events(database, resumable, "s")
        assert [d["id"] for d in data] == [e.id for e in stored if e.author != "user"]
        # A reader arriving later, on B, gets the same stream with the same cursors.
        again = read_stream(b, resumable, "s", runs[resumable])
        assert [f.id for f in again if f.id is not None] == ids

        events = stored_events(database, resumable, "s")
        assert {e.invocation_id for e in events} == {runs[resumable]}
        assert all(e.error_code is None for e in events)
        calls_made = Counter(c.name for e in events for c in e.get_function_calls())
        answers = Counter(r.name for e in events for r in e.get_function_responses())
        assert calls_made == answers == {"lookup": 1, "charge": 1}
        [charged] = [r for e in events for r in e.get_function_responses() if r.name == "charge"]
        assert charged.response == {"charged": 42}
        assert [e.text() for e in events if e.text()][-2:] == ["check out", "charged 42"]

        # What ran where: nothing that completed ran twice.
        pid_a, pid_b = a.process.pid, b.process.pid
        assert _calls(calls, resumable) == [
            ("model:0", pid_a),
            ("tool:lookup", pid_a),
            ("model:1", pid_a),
            ("tool:charge", pid_a),  # killed inside: no response was stored
            ("tool:charge", pid_b),
            ("tool:charge:done", pid_b),
            ("model:2", pid_b),
        ]

        # The plain app's run: recorded INTERRUPTED by B, charge answered, nothing run again.
        plain_events = stored_events(database, plain, "s")
        assert plain_events[-1].error_code == "INTERRUPTED"
        [answer] = [
            r for e in plain_events for r in e.get_function_responses() if r.name == "charge"
        ]
        assert answer.response == {"error": "interrupted"}
        assert [what for what, _ in _calls(calls, plain)] == [
            "model:0",
            "tool:lookup",
            "model:1",
            "tool:charge",
        ]
        status = http.get(f"{sessions_url(b, plain)}/s/invocations/{runs[plain]}").json()
        assert status["status"] == "failed" and status["error"].startswith("INTERRUPTED")
        after = max(f.id for f in seen_plain if f.id is not None)
        assert end_of(read_stream(b, plain, "s", runs[plain], after=after))["status"] == "failed"

        # The session takes the next turn (its model answers from the history at once).
        later = start(http, b, resumable, "s", "check out")
        assert end_of(read_stream(b, resumable, "s", later))["status"] == "completed"
