"""Hostile input on the SSE routes, against a real ``adk-rx api-server`` on SQLite and
PostgreSQL: malformed cursors, cursors of another invocation or far in the future, another
user's streams, and clients that leave mid-stream.

A cursor is the number of an event in its invocation's log: one from another invocation
reads this invocation's events after that number, never the other's; a cursor past the end
waits for the end frame. A client that leaves takes nothing with it: the run goes on, the
session is free afterwards, and a reader can reattach from where the client stopped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.cli.hostile_support import ALICE, APP, BACKENDS, BOB, client, hostile_server, run_body
from tests.cli.server_process import ServerProcess
from tests.cli.server_support import Frame, parse_frames, user_text

pytestmark = pytest.mark.timeout(240)

SESSIONS = f"/apps/{APP}/users/alice/sessions"


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    with hostile_server(request.param, tmp_path_factory.mktemp(request.param)) as process:
        yield process


@pytest.fixture
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with client(server, ALICE) as alice:
        yield alice


def new_session(http: httpx.Client, sid: str) -> str:
    assert http.post(SESSIONS, json={"session_id": sid}).status_code == 200
    return f"{SESSIONS}/{sid}"


def start(http: httpx.Client, session: str, text: str) -> str:
    """Starts a run the server owns; its events URL."""
    started = http.post(f"{session}/invocations", json={"new_message": user_text(text)})
    assert started.status_code == 202, started.text
    return f"{session}/invocations/{started.json()['invocation_id']}/events"


def read_all(http: httpx.Client, url: str, **headers: str) -> list[Frame]:
    answer = http.get(url, headers=headers)
    assert answer.status_code == 200, answer.text
    return parse_frames(answer.text)


def events(frames: list[Frame]) -> list[dict]:
    return [json.loads(f.data) for f in frames if f.event is None and f.data]


def end_of(frames: list[Frame]) -> dict:
    assert frames and frames[-1].event == "end", frames[-3:]
    return json.loads(frames[-1].data or "")


@pytest.mark.parametrize(
    "cursor",
    ["abc", "-1", "1.5", "1e3", "0x10", "\u0663", "9" * 30, str(2**63), " ", "1;2", "%00"],
)
def test_a_malformed_cursor_answers_400(http: httpx.Client, cursor: str):
    url = start(http, new_session(http, f"bad-{abs(hash(cursor))}"), "hi")
    assert http.get(url, params={"after": cursor}).status_code == 400
    if cursor.isascii() and cursor == cursor.strip():  # what a header can carry
        assert http.get(url, headers={"Last-Event-ID": cursor}).status_code == 400
    end_of(read_all(http, url))  # the invocation itself is untouched


def test_a_cursor_of_another_invocation_reads_only_this_one(http: httpx.Client):
    long_run = start(http, new_session(http, "cross-a"), "weather Paris")
    long_frames = read_all(http, long_run)
    short_run = start(http, new_session(http, "cross-b"), "hi")
    short_id = end_of(read_all(http, short_run))["invocation_id"]
    last_of_long = max(f.id for f in long_frames if f.id is not None)
    for cursor in range(last_of_long + 1):
        frames = read_all(http, f"{short_run}?after={cursor}")
        assert {e["invocationId"] for e in events(frames)} <= {short_id}
        assert end_of(frames)["invocation_id"] == short_id
    # The other invocation's id under this session is not found at all.
    long_id = end_of(long_frames)["invocation_id"]
    assert http.get(f"{SESSIONS}/cross-b/invocations/{long_id}/events").status_code == 404


def test_a_cursor_far_in_the_future_waits_for_the_end_and_no_longer(http: httpx.Client):
    session = new_session(http, "future")
    finished = start(http, session, "hi")
    end_of(read_all(http, finished))
    started = time.perf_counter()
    frames = read_all(http, f"{finished}?after={2**63 - 1}")
    assert [f.event for f in frames] == ["end"] and time.perf_counter() - started < 5
    running = start(http, session, "slow 20 0.05")  # about a second
    frames = read_all(http, running, **{"Last-Event-ID": str(10**18)})
    assert events(frames) == [] and end_of(frames)["status"] == "completed"


def test_another_users_stream_answers_404(server: ServerProcess, http: httpx.Client):
    url = start(http, new_session(http, "private"), "hi")
    end_of(read_all(http, url))
    with client(server, BOB) as bob:
        assert bob.get(url).status_code == 404
        assert bob.post(f"{SESSIONS.replace('alice', 'bob')}", json={"session_id": "private"})
        assert bob.get(url.replace("/alice/", "/bob/")).status_code == 404
        assert bob.post("/run_sse", json=run_body("alice", "private")).status_code == 404
    with client(server) as anonymous:
        assert anonymous.get(url).status_code == 401


@pytest.mark.parametrize("route", ["invocations", "run_sse"])
def test_a_client_that_leaves_mid_stream_takes_nothing_with_it(
    server: ServerProcess, http: httpx.Client, route: str
):
    session = new_session(http, f"leave-{route}")
    sid = session.rsplit("/", 1)[1]
    text = "slow 100 0.02"  # about two seconds
    if route == "invocations":
        url = start(http, session, text)
        request = http.build_request("GET", url)
    else:
        request = http.build_request("POST", "/run_sse", json=run_body("alice", sid, text))
    seen: list[dict] = []
    with client(server, ALICE) as leaving:
        answer = leaving.send(request, stream=True)
        for line in answer.iter_lines():
            if line.startswith("data: "):
                seen.append(json.loads(line.removeprefix("data: ")))
            if len(seen) == 3:
                break
        answer.close()  # the connection goes with it, mid-stream
    invocation_id = seen[0]["invocationId"]
    stream = f"{session}/invocations/{invocation_id}/events"
    frames = read_all(http, stream)  # reattach from the start: every event, then the end
    assert end_of(frames)["status"] == "completed"
    assert [e["id"] for e in events(frames)][:1] == [seen[0]["id"]]
    ran = http.post("/run", json=run_body("alice", sid, "hi again"))
    assert ran.status_code == 200, ran.text  # the session was released
    assert "Traceback" not in server.output()


def test_many_readers_leaving_at_once_leave_the_run_and_the_server_whole(
    server: ServerProcess, http: httpx.Client
):
    session = new_session(http, "crowd")
    url = start(http, session, "slow 100 0.02")
    readers = [client(server, ALICE) for _ in range(20)]
    try:
        answers = [reader.send(reader.build_request("GET", url), stream=True) for reader in readers]
        for answer in answers:
            next(answer.iter_lines())
            answer.close()
    finally:
        for reader in readers:
            reader.close()
    assert end_of(read_all(http, url))["status"] == "completed"
    with client(server) as anonymous:
        assert anonymous.get("/health").json() == {"status": "ok"}
    assert "Traceback" not in server.output()
