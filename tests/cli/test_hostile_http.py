"""Hostile input on the HTTP routes, against a real ``adk-rx api-server`` on SQLite and
PostgreSQL: other users' ids, path traversal, malformed and mistyped JSON, deep and huge
bodies, huge headers, slow bodies, and what ``/health`` tells a caller without a token.

Every refusal is a 4xx that stores nothing; the server keeps serving after each one. (Eval
routes, the live WebSocket and artifact names are tested in modules of their own.)
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.cli.hostile_support import (
    ALICE,
    APP,
    BACKENDS,
    BOB,
    MAX_BODY,
    client,
    hostile_server,
    raw_request,
    run_body,
)
from tests.cli.server_process import ServerProcess
from tests.cli.server_support import user_text

pytestmark = pytest.mark.timeout(240)

SESSIONS = f"/apps/{APP}/users/alice/sessions"
S1 = f"{SESSIONS}/s1"


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    with hostile_server(request.param, tmp_path_factory.mktemp(request.param)) as process:
        yield process


@pytest.fixture(scope="module")
def alice_turn(server: ServerProcess) -> dict[str, str]:
    """Alice's session ``s1``: one turn that saved an artifact, and a finished invocation."""
    with client(server, ALICE) as http:
        assert http.post(SESSIONS, json={"session_id": "s1"}).status_code == 200
        ran = http.post("/run", json=run_body("alice", "s1", "note secret"))
        assert ran.status_code == 200, ran.text
        started = http.post(f"{S1}/invocations", json={"new_message": user_text("hi")})
        assert started.status_code == 202, started.text
        invocation = started.json()["invocation_id"]
        assert "event: end" in http.get(f"{S1}/invocations/{invocation}/events").text
        event = http.get(S1).json()["events"][-1]["id"]
    return {"invocation": invocation, "event": event}


def stored(server: ServerProcess) -> dict[str, Any]:
    """Alice's ``s1`` as stored (events and state), and her artifact names."""
    with client(server, ALICE) as http:
        session = http.get(S1).json()
        artifacts = http.get(f"{S1}/artifacts").json()
    return {"events": len(session["events"]), "state": session["state"], "artifacts": artifacts}


def assert_refused(answer: httpx.Response, *allowed: int) -> None:
    assert answer.status_code in (allowed or (400, 404, 413, 422)), (
        answer.status_code,
        answer.text[:300],
    )


# -- /health --------------------------------------------------------------------------------
def test_health_answers_a_probe_without_a_token_and_says_nothing_else(server: ServerProcess):
    with client(server) as http:
        probe = http.get("/health")
        by_address = http.get("/health", headers={"Host": "10.1.2.3:8000"})
        others = [http.get(path).status_code for path in ("/version", "/list-apps", SESSIONS)]
    assert probe.status_code == 200 and probe.json() == {"status": "ok"}
    # No server name or version, no app, no user: only what any JSON answer carries.
    assert set(probe.headers) <= {"content-length", "content-type", "date"}
    assert by_address.status_code == 200  # a load balancer probes the machine's address
    assert others == [401, 401, 401]  # every other route still needs a token


# -- another user's ids ---------------------------------------------------------------------
def test_another_users_ids_answer_404_on_every_user_scoped_route(
    server: ServerProcess, alice_turn: dict[str, str]
):
    before = stored(server)
    iid, eid = alice_turn["invocation"], alice_turn["event"]
    artifact = f"{S1}/artifacts/note.txt"
    invocation = f"{S1}/invocations/{iid}"
    message = {"new_message": user_text("hi")}
    attempts: list[tuple[str, str, Any]] = [
        ("GET", SESSIONS, None),
        ("POST", SESSIONS, {"session_id": "s2"}),
        ("GET", S1, None),
        ("POST", S1, {}),
        ("PATCH", S1, {"stateDelta": {"k": 1}}),
        ("DELETE", S1, None),
        ("GET", f"{S1}/artifacts", None),
        ("POST", f"{S1}/artifacts", {"filename": "x.txt", "artifact": {"text": "x"}}),
        ("GET", artifact, None),
        ("GET", f"{artifact}/versions", None),
        ("GET", f"{artifact}/versions/metadata", None),
        ("GET", f"{artifact}/versions/0", None),
        ("GET", f"{artifact}/versions/0/metadata", None),
        ("DELETE", artifact, None),
        ("POST", "/run", run_body("alice", "s1")),
        ("POST", "/run_sse", run_body("alice", "s1")),
        ("POST", f"{S1}/invocations", message),
        ("GET", f"{S1}/invocations", None),
        ("GET", invocation, None),
        ("GET", f"{invocation}/events", None),
        ("POST", f"{invocation}:cancel", None),
        ("GET", f"{invocation}/trace", None),
        ("PATCH", f"/apps/{APP}/users/alice/memory", {"session_id": "s1"}),
        ("GET", f"/dev/apps/{APP}/users/alice/sessions/s1/events/{eid}/graph", None),
        ("GET", f"/dev/apps/{APP}/debug/trace/{eid}", None),
    ]
    with client(server, BOB) as http:
        for method, url, body in attempts:
            answer = http.request(method, url, json=body)
            assert answer.status_code == 404, (method, url, answer.status_code, answer.text)
        # Alice's ids under bob's own session of the same name reach nothing of hers.
        assert http.post(f"/apps/{APP}/users/bob/sessions", json={"session_id": "s1"}).is_success
        bobs = f"/apps/{APP}/users/bob/sessions/s1"
        for url in (f"{bobs}/invocations/{iid}", f"{bobs}/invocations/{iid}/events"):
            assert http.get(url).status_code == 404, url
        assert http.get(f"{bobs}/artifacts").json() == []
        assert http.get(f"/dev/apps/{APP}/users/bob/sessions/s1/events/{eid}/graph").json() == {}
        assert http.get(f"/dev/apps/{APP}/debug/trace/session/s1").json() == []
    assert stored(server) == before


# -- path traversal -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/apps/../users/alice/sessions",
        "/apps/%2E%2E/users/alice/sessions",
        f"/apps/{APP}/users/../sessions",
        f"/apps/{APP}/users/alice/sessions/..",
        f"/apps/{APP}/users/alice/sessions/%2E%2E%2F%2E%2E%2Fbob",
        f"/apps/{APP}/users/alice/sessions/s1/invocations/..%2F..%2Fetc%2Fpasswd",
        f"/apps/{APP}/users/alice/sessions/s1/invocations/%2E%2E/events",
        f"/apps/{APP}/users/alice/sessions/..%5C..%5Cs1",
        f"/apps/{APP}/users/alice/sessions/s1%00",
        f"/dev/apps/%2E%2E%2F{APP}/build_graph",
    ],
)
def test_path_traversal_in_ids_answers_4xx_and_reaches_nothing(
    server: ServerProcess, alice_turn: dict[str, str], path: str
):
    # Sent as raw bytes: a client library would resolve the dot segments first.
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {server.host}\r\n"
        f"Authorization: {ALICE['Authorization']}\r\nConnection: close\r\n\r\n"
    )
    answer = raw_request(server, request.encode())
    status = int(answer.split(b" ", 2)[1])
    assert status in (400, 404), answer[:300]
    assert b"secret" not in answer and b"root:" not in answer


# -- malformed and mistyped bodies ----------------------------------------------------------
BODY_ROUTES = [
    ("POST", "/run"),
    ("POST", "/run_sse"),
    ("POST", SESSIONS),
    ("POST", f"{SESSIONS}/s9"),
    ("PATCH", S1),
    ("POST", f"{S1}/invocations"),
    ("POST", f"{S1}/artifacts"),
    ("PATCH", f"/apps/{APP}/users/alice/memory"),
]
MALFORMED = [
    b"{",
    b'{"a": 1',
    b'{"a": 1}{"b": 2}',
    b"{'a': 1}",
    b'{"a": NaN}',
    b'{"a": -Infinity}',
    b'{"a": 1e999}',
    b"\xff\xfe{}",
    "\ufeff{}".encode(),
    '{"a": "x"}'.encode("utf-16"),
    b'{"a": "\\ud800"}',
    b'{"a": "\xed\xa0\x80"}',  # a surrogate encoded as UTF-8 bytes
    b"[" * 1000 + b"]" * 1000,
    b"[1, 2]",
    b'"text"',
    b"42",
]


def test_malformed_json_answers_4xx_on_every_body_route(
    server: ServerProcess, alice_turn: dict[str, str]
):
    before = stored(server)
    with client(server, ALICE) as http:
        for method, url in BODY_ROUTES:
            for raw in MALFORMED:
                answer = http.request(method, url, content=raw)
                assert answer.status_code in (400, 404, 422), (method, url, raw[:20], answer.text)
    assert stored(server) == before


WRONG_RUN_BODIES: list[dict[str, Any]] = [
    {**run_body("alice", "s1"), "new_message": "hi"},
    {**run_body("alice", "s1"), "new_message": {"role": "user", "parts": "hi"}},
    {**run_body("alice", "s1"), "new_message": {"role": "user", "parts": [1]}},
    {**run_body("alice", "s1"), "new_message": {"role": "user", "parts": [{"text": 5}]}},
    {**run_body("alice", "s1"), "new_message": {"role": 5, "parts": [{"text": "x"}]}},
    {**run_body("alice", "s1"), "new_message": {"role": "user", "parts": []}},
    {**run_body("alice", "s1"), "new_message": {"parts": [{"inline_data": {"data": "!!"}}]}},
    {**run_body("alice", "s1"), "state_delta": [1]},
    {**run_body("alice", "s1"), "state_delta": "x"},
    {**run_body("alice", "s1"), "session_id": 5},
    {**run_body("alice", "s1"), "user_id": 5},
    {**run_body("alice", "s1"), "app_name": ["chat"]},
    {**run_body("alice", "s1"), "invocation_id": 7},
    {**run_body("alice", "s1"), "function_call_event_id": []},
    {**run_body("alice", "s1"), "session_id": "x" * 600},
]


@pytest.mark.parametrize("body", WRONG_RUN_BODIES, ids=range(len(WRONG_RUN_BODIES)))
def test_a_run_body_of_wrong_types_answers_4xx(
    server: ServerProcess, alice_turn: dict[str, str], body: dict[str, Any]
):
    before = stored(server)
    with client(server, ALICE) as http:
        for url in ("/run", "/run_sse", f"{S1}/invocations"):
            assert_refused(http.post(url, json=body))
    assert stored(server) == before


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("POST", SESSIONS, {"session_id": 5}),
        ("POST", SESSIONS, {"state": [1, 2]}),
        ("POST", SESSIONS, {"state": "x"}),
        ("POST", SESSIONS, {"events": "x"}),
        ("POST", SESSIONS, {"events": [{"author": 5}]}),
        ("POST", SESSIONS, {"events": [1]}),
        ("POST", f"{SESSIONS}/s9", [1]),
        ("PATCH", S1, {"stateDelta": [1]}),
        ("PATCH", S1, {"stateDelta": "x"}),
        ("PATCH", S1, {}),
        ("POST", f"{S1}/artifacts", {"filename": 5, "artifact": {"text": "x"}}),
        ("POST", f"{S1}/artifacts", {"filename": "a.txt", "artifact": "x"}),
        ("POST", f"{S1}/artifacts", {"filename": "a.txt", "artifact": {"text": 5}}),
        ("POST", f"{S1}/artifacts", {"filename": "a.txt", "artifact": {"inlineData": 1}}),
        ("PATCH", f"/apps/{APP}/users/alice/memory", {"session_id": 5}),
        ("PATCH", f"/apps/{APP}/users/alice/memory", {"session_id": "nope"}),
    ],
)
def test_a_session_or_artifact_body_of_wrong_types_answers_4xx(
    server: ServerProcess, alice_turn: dict[str, str], method: str, url: str, body: Any
):
    before = stored(server)
    with client(server, ALICE) as http:
        assert_refused(http.request(method, url, json=body))
        assert http.get(f"{SESSIONS}/s9").status_code == 404
    assert stored(server) == before


# -- size, depth, headers, time -------------------------------------------------------------
def test_deep_or_huge_bodies_are_refused_before_they_are_parsed(
    server: ServerProcess, alice_turn: dict[str, str]
):
    before = stored(server)
    deep = '{"k": ' + "[" * 100 + "]" * 100 + "}"
    many = '{"k": [' + ",".join(["[]"] * 150_000) + "]}"
    over = json.dumps({"state": {"k": "x" * MAX_BODY}})
    with client(server, ALICE) as http:
        for method, url in BODY_ROUTES:
            assert_refused(http.request(method, url, content=deep), 400)
            assert_refused(http.request(method, url, content=many), 413)
            assert_refused(http.request(method, url, content=over), 413)
            # Without a Content-Length the reader stops at the limit all the same.
            chunks = iter([over.encode()[i : i + 65536] for i in range(0, len(over), 65536)])
            assert_refused(http.request(method, url, content=chunks), 413)
    assert stored(server) == before


def test_huge_headers_are_refused_and_the_server_keeps_serving(server: ServerProcess):
    head = f"GET /health HTTP/1.1\r\nHost: {server.host}\r\n"
    one_big = f"{head}X-Big: {'a' * 200_000}\r\nConnection: close\r\n\r\n"
    many = head + "".join(f"X-{i}: v\r\n" for i in range(20_000)) + "Connection: close\r\n\r\n"
    endless = f"{head}X-Big: {'a' * 20_000_000}\r\n\r\n"
    for request in (one_big, many, endless):
        answer = raw_request(server, request.encode())
        assert answer == b"" or answer.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 431 ")), answer
    with client(server) as http:
        assert http.get("/health").status_code == 200


def test_slow_bodies_answer_408_and_start_nothing(
    server: ServerProcess, alice_turn: dict[str, str]
):
    before = stored(server)
    with client(server, ALICE) as http:
        held = http.get(f"{S1}/invocations").json()
    body = json.dumps({"new_message": user_text("slow")}).encode()
    head = (
        f"POST {S1}/invocations HTTP/1.1\r\nHost: {server.host}\r\n"
        f"Authorization: {ALICE['Authorization']}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    started = time.perf_counter()
    answer = raw_request(server, head + body[:5])  # and then nothing more
    took = time.perf_counter() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert took < 15  # the server's deadline is 2 s
    with client(server, ALICE) as http:
        after = http.get(f"{S1}/invocations").json()
    assert len(after) == len(held)
    assert stored(server) == before


def test_a_body_cut_short_by_the_client_leaves_no_error_in_the_log(server: ServerProcess):
    auth = ALICE["Authorization"]
    head = f"POST /run HTTP/1.1\r\nHost: {server.host}\r\nAuthorization: {auth}\r\n"
    cut_short = f'{head}Content-Length: 100\r\n\r\n{{"app_name":'  # then the client leaves
    broken_chunk = f"{head}Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n"
    invalid = "Invalid HTTP request received."  # uvicorn's warning, on the same stderr
    output = server.output
    tracebacks, warnings = output().count("Traceback"), output().count(invalid)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(cut_short.encode())
    raw_request(server, broken_chunk.encode())
    raw_request(server, b"NOT HTTP\r\n\r\n")  # one more warning: the log is written past both
    with server.written:  # the log reaches the test through a pipe, after the answers
        server.written.wait_for(lambda: output().count(invalid) >= warnings + 2, 30)
    assert output().count(invalid) == warnings + 2
    assert output().count("Traceback") == tracebacks, output()[-3000:]
