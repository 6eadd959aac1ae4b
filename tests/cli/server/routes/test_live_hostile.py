"""``/run_live`` as a hostile client drives it, against a real ``adk-rx api-server`` process
on SQLite and PostgreSQL.

Every frame the route refuses closes that socket (1003 unreadable, 1009 too big) and ends its
run; nothing of the frame is stored, and the session then serves a new live connection and
``/run`` at once. Another user's session answers as a missing one.
"""

from __future__ import annotations

import contextlib
import json
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Close
from websockets.sync.client import ClientConnection, connect

from adk_rx import Event
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text
from tests.sessions.postgres import scratch_schema

pytestmark = pytest.mark.timeout(180)

APP = "voice_hostile"
MAX_BYTES = 65_536
MAX_PARTS = 4
TOKENS = {"alice": "t-alice", "bob": "t-bob"}

AGENT = textwrap.dedent('''
    from adk_rx import LlmAgent
    from adk_rx.testing import ScriptedLiveLlm, ScriptedLlm


    def echo(content):
        return "echo: " + (content.parts[-1].text or "")


    class LiveAndText(ScriptedLiveLlm):
        """Echoes on live connections; answers "ok" to /run."""

        def __init__(self):
            super().__init__([echo] * 100_000)
            self.text = ScriptedLlm([lambda request: "ok"] * 100_000)

        def generate_content(self, llm_request, stream=False):
            return self.text.generate_content(llm_request, stream)


    root_agent = LlmAgent(name="voice", model=LiveAndText())
''')


def start(tmp: Path, *options: str) -> Any:
    (tmp / "agents" / APP).mkdir(parents=True)
    (tmp / "agents" / APP / "agent.py").write_text(AGENT)
    tokens = ",".join(f"{token}={user}" for user, token in TOKENS.items())
    return api_server_process(
        tmp / "agents",
        tmp,
        "--max-body-bytes",
        str(MAX_BYTES),
        *options,
        env={"ADK_RX_MAX_PARTS": str(MAX_PARTS), "ADK_RX_TOKENS": tokens},
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp(f"live_{request.param}")
    if request.param == "sqlite":
        with start(tmp) as process:
            yield process
        return
    with scratch_schema() as url, start(tmp, "--session-service-uri", url) as process:
        yield process


def headers(user: str = "alice") -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"}


def new_session(server: ServerProcess) -> str:
    response = httpx.post(f"{server.url}/apps/{APP}/users/alice/sessions", headers=headers())
    assert response.status_code == 200, response.text
    return response.json()["id"]


def stored_texts(server: ServerProcess, sid: str) -> list[str]:
    """The texts stored in the session (a run's stop record has none)."""
    response = httpx.get(f"{server.url}/apps/{APP}/users/alice/sessions/{sid}", headers=headers())
    assert response.status_code == 200, response.text
    return [text for e in response.json()["events"] if (text := Event.from_dict(e).text())]


def ws_url(server: ServerProcess, sid: str, user: str = "alice", token: str = "t-alice") -> str:
    base = server.url.replace("http://", "ws://")
    return f"{base}/run_live?app_name={APP}&user_id={user}&session_id={sid}&access_token={token}"


def content(*texts: str) -> str:
    return json.dumps({"content": {"role": "user", "parts": [{"text": t} for t in texts]}})


def closed_by_server(ws: ClientConnection) -> Close:
    """The close frame the server sent (events before it are skipped)."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None, "the server dropped the connection without a close"
    return closed.value.rcvd


def refusal(server: ServerProcess, sid: str, frame: str | bytes) -> Close:
    with connect(ws_url(server, sid), max_size=None) as ws:
        ws.send(frame)
        return closed_by_server(ws)


def live_turn(ws: ClientConnection, text: str) -> list[Event]:
    ws.send(content(text))
    events: list[Event] = []
    while not events or not events[-1].turn_complete:
        events.append(Event.from_json(ws.recv(timeout=10)))
    return events


def assert_session_serves(server: ServerProcess, sid: str) -> None:
    """A new live connection answers (it would wait behind a run left holding the session),
    then ``/run`` answers 200 (it would answer 409)."""
    with connect(ws_url(server, sid)) as ws:
        events = live_turn(ws, "still there?")
        assert [e.text() for e in events if e.text() and not e.partial] == [
            "still there?",
            "echo: still there?",
        ]
        ws.send(json.dumps({"close": True}))
        assert closed_by_server(ws).code == 1000
    body = {"app_name": APP, "user_id": "alice", "session_id": sid, "new_message": user_text("hi")}
    answer = httpx.post(f"{server.url}/run", json=body, headers=headers(), timeout=30)
    assert answer.status_code == 200, answer.text
    assert [e["content"]["parts"][0]["text"] for e in answer.json()] == ["ok"]


SERVED = ["still there?", "echo: still there?", "hi", "ok"]  # what assert_session_serves stores

UNREADABLE = {
    "binary": b'{"content": {"role": "user", "parts": [{"text": "hi"}]}}',
    "not JSON": "hello?",
    "NaN": '{"close": NaN}',
    "a list": "[1, 2]",
    "a string": '"close"',
    "no field": "{}",
    "an unknown field only": '{"contents": {"parts": [{"text": "hi"}]}}',
    "content of the wrong type": '{"content": 42}',
    "close of the wrong type": '{"close": "maybe"}',
    "blob of the wrong type": '{"blob": {"data": 5}}',
    "a lone surrogate": '{"content": {"role": "user", "parts": [{"text": "\\ud800"}]}}',
    "nested too deep": '{"content": {"role": "user", "parts": [{"text": "x"}]}, "x": '
    + "[" * 100
    + "]" * 100
    + "}",
    "a function call": json.dumps(
        {"content": {"role": "user", "parts": [{"function_call": {"name": "f", "args": {}}}]}}
    ),
    "no parts": '{"content": {"role": "user", "parts": []}}',
    # google-genai's enums raise AttributeError, not a ValidationError, for an object.
    "an enum field holding an object": '{"content": {"role": "user", "parts": [{"text": "hi", '
    '"media_processing": {}}]}}',
}


@pytest.mark.parametrize("frame", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_frame_the_route_cannot_read_closes_1003_and_frees_the_session(
    server: ServerProcess, frame: str | bytes
) -> None:
    sid = new_session(server)

    close = refusal(server, sid, frame)

    assert close.code == 1003 and close.reason
    assert_session_serves(server, sid)
    assert stored_texts(server, sid) == SERVED


def test_a_frame_over_the_body_limit_is_refused_1009_and_nothing_of_it_is_stored(
    server: ServerProcess,
) -> None:
    sid = new_session(server)

    close = refusal(server, sid, content("x" * MAX_BYTES))
    assert close.code == 1009
    close = refusal(server, sid, content("x" * 10 * 1024 * 1024))
    assert close.code == 1009
    assert "the frame is larger" not in close.reason  # uvicorn cut it off, not the route

    assert_session_serves(server, sid)
    assert stored_texts(server, sid) == SERVED


def test_a_message_with_more_parts_than_the_limit_is_refused_and_not_stored(
    server: ServerProcess,
) -> None:
    sid = new_session(server)

    for parts in (MAX_PARTS + 1, 1000):
        close = refusal(server, sid, content(*(["p"] * parts)))
        assert close.code == 1003 and f"limit ({MAX_PARTS})" in close.reason

    assert_session_serves(server, sid)
    assert stored_texts(server, sid) == SERVED


def test_another_users_session_answers_as_a_missing_one(server: ServerProcess) -> None:
    sid = new_session(server)

    answers = []
    for url in [
        ws_url(server, sid, user="alice", token="t-bob"),  # bob names alice
        ws_url(server, sid, user="bob", token="t-bob"),  # bob's path, alice's session
        ws_url(server, "no-such-session", user="bob", token="t-bob"),
    ]:
        with pytest.raises(InvalidStatus) as refused, connect(url):
            pass
        answers.append((refused.value.response.status_code, refused.value.response.body))

    assert answers == [(404, b'{"detail":"session not found"}')] * 3
    assert_session_serves(server, sid)


def test_a_client_that_vanishes_mid_session_frees_it(server: ServerProcess) -> None:
    sid = new_session(server)
    ws = connect(ws_url(server, sid))
    live_turn(ws, "hello")
    ws.send(content("and then"))

    ws.socket.shutdown(socket.SHUT_RDWR)  # no close frame: the network went away
    ws.socket.close()

    assert_session_serves(server, sid)


def test_frames_after_a_close_request_are_ignored(server: ServerProcess) -> None:
    sid = new_session(server)

    with connect(ws_url(server, sid)) as ws:
        live_turn(ws, "hello")
        ws.send(json.dumps({"close": True}))
        # The server may close before these go out: a refused send is as good as an ignored one.
        with contextlib.suppress(ConnectionClosed):
            ws.send(content("too late"))
            ws.send(b"\x00binary")
        assert closed_by_server(ws).code == 1000

    assert "too late" not in stored_texts(server, sid)
    assert_session_serves(server, sid)


def test_a_silent_client_is_closed_after_the_run_timeout(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with start(tmp_path_factory.mktemp("live_idle"), "--run-timeout", "1") as idle:
        sid = new_session(idle)
        with connect(ws_url(idle, sid)) as ws:
            close = closed_by_server(ws)  # never sends anything
        assert close.code == 1000 and "1 s" in close.reason
        assert_session_serves(idle, sid)


def test_a_refused_frame_on_a_queued_socket_leaves_the_open_one_alone(
    server: ServerProcess,
) -> None:
    sid = new_session(server)

    with connect(ws_url(server, sid)) as first:
        live_turn(first, "hello")
        # The second socket's run waits behind the first one's; its refusal does not.
        assert refusal(server, sid, b"\x00").code == 1003
        assert [e.text() for e in live_turn(first, "again") if not e.partial] == [
            "again",
            "echo: again",
        ]
        first.send(json.dumps({"close": True}))
        assert closed_by_server(first).code == 1000

    assert_session_serves(server, sid)
