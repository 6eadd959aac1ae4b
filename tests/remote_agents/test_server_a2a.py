"""``adk-rx api-server --a2a`` as a real process: the card, the four methods, cancellation
that reaches the run, and hostile input (other users' ids, malformed JSON-RPC, unknown
methods, oversize bodies), with bearer tokens on."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.server_process import ServerProcess, api_server_process

pytestmark = pytest.mark.timeout(120)

AGENTS = Path(__file__).resolve().parent / "agents"
TOKENS = {"alice": "tok-alice", "bob": "tok-bob"}
MAX_BODY = 64 * 1024
RPC = "/a2a/helper"
TASK_NOT_FOUND = -32001


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"ADK_RX_TOKENS": ",".join(f"{t}={u}" for u, t in TOKENS.items())}
    with api_server_process(
        AGENTS,
        tmp_path_factory.mktemp("a2a"),
        "--a2a",
        "--max-body-bytes",
        str(MAX_BODY),
        env=env,
    ) as process:
        yield process


def client(server: ServerProcess, user: str | None = "alice") -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=30)


def rpc(method: str, params: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def message(text: str, **ids: str) -> dict[str, Any]:
    found = {
        "messageId": f"m-{text[:8]}",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    return {"message": {**found, **ids}}


def send(http: httpx.Client, text: str, **ids: str) -> dict[str, Any]:
    answer = http.post(RPC, json=rpc("message/send", message(text, **ids)))
    assert answer.status_code == 200, answer.text
    return answer.json()


def error_code(answer: httpx.Response) -> int:
    return answer.json()["error"]["code"]


@pytest.fixture(scope="module")
def alice_task(server: ServerProcess) -> dict[str, Any]:
    with client(server) as http:
        return send(http, "hello")["result"]


def test_the_card_names_the_endpoint_and_the_skills_of_the_agent_and_its_tools(
    server: ServerProcess,
):
    with client(server) as http:
        card = http.get(f"{RPC}/.well-known/agent-card.json").json()

    assert card["name"] == "helper"
    assert {i["url"] for i in card["supportedInterfaces"]} == {f"{server.url}{RPC}"}
    assert card["url"] == f"{server.url}{RPC}"  # what an A2A 0.3 client reads
    assert card["capabilities"]["streaming"] is True
    skills = {(s["name"], tuple(s["tags"])) for s in card["skills"]}
    assert skills == {("helper", ("agent",)), ("wait_for_cancel", ("tool",))}


def test_message_send_answers_a_completed_task_and_tasks_get_finds_it(
    server: ServerProcess, alice_task: dict[str, Any]
):
    assert alice_task["status"]["state"] == "completed"
    assert alice_task["artifacts"][0]["parts"][0]["text"] == "echo: hello"
    with client(server) as http:
        got = http.post(RPC, json=rpc("tasks/get", {"id": alice_task["id"]})).json()
        session = http.get(f"/apps/helper/users/alice/sessions/{alice_task['contextId']}")

    assert got["result"]["id"] == alice_task["id"]
    assert got["result"]["status"]["state"] == "completed"
    # The task ran as an invocation of alice's session, in the server's session store.
    assert [e["author"] for e in session.json()["events"]] == ["user", "helper"]


def test_message_stream_sends_the_chunks_as_artifact_updates(server: ServerProcess):
    with (
        client(server) as http,
        http.stream("POST", RPC, json=rpc("message/stream", message("stream me"))) as answer,
    ):
        frames = [json.loads(line[5:]) for line in answer.iter_lines() if line.startswith("data:")]

    results = [frame["result"] for frame in frames]
    kinds = [r["kind"] for r in results]
    assert kinds[0] == "task" and kinds[-1] == "status-update"
    chunks = [r for r in results if r["kind"] == "artifact-update" and not r["lastChunk"]]
    assert "".join(c["artifact"]["parts"][0]["text"] for c in chunks) == "echo: stream me"
    (whole,) = [r for r in results if r["kind"] == "artifact-update" and r["lastChunk"]]
    assert whole["artifact"]["parts"][0]["text"] == "echo: stream me"
    assert results[-1]["status"]["state"] == "completed"


def test_another_users_task_ids_answer_task_not_found(
    server: ServerProcess, alice_task: dict[str, Any]
):
    with client(server, "bob") as http:
        got = http.post(RPC, json=rpc("tasks/get", {"id": alice_task["id"]}))
        cancelled = http.post(RPC, json=rpc("tasks/cancel", {"id": alice_task["id"]}))
        continued = http.post(
            RPC, json=rpc("message/send", message("me too", taskId=alice_task["id"]))
        )

    assert [error_code(a) for a in (got, cancelled, continued)] == [TASK_NOT_FOUND] * 3


def test_another_users_context_id_reaches_none_of_their_session(
    server: ServerProcess, alice_task: dict[str, Any]
):
    context = alice_task["contextId"]
    path = f"/apps/helper/users/alice/sessions/{context}"
    with client(server) as http:
        before = http.get(path).json()["events"]
    with client(server, "bob") as http:
        task = send(http, "whose is this", contextId=context)["result"]
        bobs = http.get(f"/apps/helper/users/bob/sessions/{context}").json()["events"]
        alices = http.get(path)
    with client(server) as http:
        after = http.get(path).json()["events"]

    assert task["status"]["state"] == "completed"
    assert [e["author"] for e in bobs] == ["user", "helper"]  # bob's own conversation
    assert alices.status_code == 404  # bob cannot read alice's session
    assert after == before


def test_without_a_token_every_a2a_route_answers_401(server: ServerProcess):
    with client(server, None) as http:
        card = http.get(f"{RPC}/.well-known/agent-card.json")
        sent = http.post(RPC, json=rpc("message/send", message("hi")))

    assert (card.status_code, sent.status_code) == (401, 401)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),  # a batch
        (b'{"jsonrpc": "1.0", "id": 1, "method": "message/send"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),  # no method
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 3}}', -32602),
        # The SDK's A2A 0.3 adapter answers invalid params as an invalid request.
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": []}', -32600),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {}}}',
            -32600,
        ),
    ],
)
def test_malformed_json_rpc_answers_a_json_rpc_error_and_runs_nothing(
    server: ServerProcess, body: bytes, code: int
):
    with client(server) as http:
        answer = http.post(RPC, content=body, headers={"content-type": "application/json"})

    assert answer.json()["error"]["code"] == code, answer.text
    assert "A2A-TEST" not in server.output()


def test_an_unknown_method_answers_method_not_found(server: ServerProcess):
    with client(server) as http:
        answer = http.post(RPC, json=rpc("tasks/delete_everything", {"id": "x"}))

    assert error_code(answer) == -32601


def test_an_oversize_body_answers_413_before_it_is_parsed(server: ServerProcess):
    huge = message("x" * (MAX_BODY + 1))
    with client(server) as http:
        answer = http.post(RPC, json=rpc("message/send", huge))
        deep = http.post(RPC, content=b"[" * 100 + b"]" * 100)

    assert answer.status_code == 413 and error_code(answer) == -32600
    assert deep.status_code == 400 and error_code(deep) == -32700


def test_a_message_over_the_servers_part_limit_fails_its_task_and_runs_nothing(
    server: ServerProcess,
):
    parts = [{"kind": "text", "text": "x"}] * 65  # --max-parts is 64 by default
    body = {"message": {"messageId": "many", "role": "user", "parts": parts}}
    with client(server) as http:
        task = http.post(RPC, json=rpc("message/send", body)).json()["result"]
        stored = http.get(f"/apps/helper/users/alice/sessions/{task['contextId']}")

    assert task["status"]["state"] == "failed"
    assert "more than the server's limit" in task["status"]["message"]["parts"][0]["text"]
    assert stored.status_code == 404  # nothing was run, no session was made


@pytest.mark.parametrize("context", ["bad\u0001id", "x" * 1000, ".."])
def test_a_context_id_no_session_may_have_fails_its_task(server: ServerProcess, context: str):
    with client(server) as http:
        answer = http.post(RPC, json=rpc("message/send", message("hi", contextId=context)))

    found = answer.json()
    assert "error" in found or found["result"]["status"]["state"] == "failed", found


def test_an_unknown_app_answers_404(server: ServerProcess):
    with client(server) as http:
        card = http.get("/a2a/nobody/.well-known/agent-card.json")
        sent = http.post("/a2a/nobody", json=rpc("message/send", message("hi")))

    assert (card.status_code, sent.status_code) == (404, 404)


def test_tasks_cancel_disposes_the_run_the_tool_stops_and_the_session_records_cancelled(
    server: ServerProcess,
):
    answers: dict[str, Any] = {}

    def stream() -> None:
        with (
            client(server) as http,
            http.stream("POST", RPC, json=rpc("message/stream", message("use the tool"))) as answer,
        ):
            for line in answer.iter_lines():
                if line.startswith("data:") and "task" not in answers:
                    answers["task"] = json.loads(line[5:])["result"]

    reader = threading.Thread(target=stream, daemon=True)
    reader.start()
    server.wait_for("A2A-TEST tool started")
    task = answers["task"]
    with client(server) as http:
        cancelled = http.post(RPC, json=rpc("tasks/cancel", {"id": task["id"]})).json()
        server.wait_for("A2A-TEST tool stopped", timeout=1.0)  # the tool was cancelled
        events = http.get(f"/apps/helper/users/alice/sessions/{task['contextId']}").json()["events"]
        got = http.post(RPC, json=rpc("tasks/get", {"id": task["id"]})).json()
    reader.join(10)

    assert cancelled["result"]["status"]["state"] == "canceled"
    assert got["result"]["status"]["state"] == "canceled"
    assert events[-1]["errorCode"] == "CANCELLED"
    responses = [
        p["functionResponse"]
        for e in events
        for p in e.get("content", {}).get("parts", [])
        if "functionResponse" in p
    ]
    assert responses[-1]["response"] == {"error": "cancelled"}
