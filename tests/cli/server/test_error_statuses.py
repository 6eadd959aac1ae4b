"""Requests that used to end in a 500 answer the status that says what went wrong, against
real ``adk-rx api-server`` processes on SQLite and PostgreSQL:

* a function response that answers no open call of the session: 400 on every route that
  starts a run (the live socket ends with the error), nothing stored, and a strict model
  still answers the session's next turn;
* artifacts of a session or user the file store cannot name (``..``, too long): 400;
* the model's provider answering HTTP 400: 502 with the provider's message;
* the database dropping the run's connections before it started: one retry, then 503.
"""

from __future__ import annotations

import json
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from websockets.sync.client import connect

from adk_rx import Event
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.sessions.sql_engine import normalize_url
from adk_rx.sessions.sql_lock import lock_key
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import parse_frames, user_text, write_agents
from tests.models._fakes import FakeServer, json_reply, serving_fake, strict_history
from tests.sessions.postgres import scratch_schema, server_url

pytestmark = pytest.mark.timeout(180)

STRICT_AGENT = textwrap.dedent("""
    import os

    from adk_rx import LlmAgent
    from adk_rx.models import OpenAiCompatibleLlm

    root_agent = LlmAgent(
        name="strict",
        model=OpenAiCompatibleLlm("m", base_url=os.environ["FAKE_MODEL_URL"], retry=None),
    )
""")

LIVE_AGENT = textwrap.dedent("""
    from adk_rx import LlmAgent
    from adk_rx.testing import ScriptedLiveLlm

    root_agent = LlmAgent(
        name="voice", model=ScriptedLiveLlm([lambda content: "heard"] * 1000)
    )
""")


def _agents(root: Path) -> Path:
    agents = write_agents(root / "agents", "chat")
    for name, source in (("strict", STRICT_AGENT), ("voice", LIVE_AGENT)):
        (agents / name).mkdir()
        (agents / name / "agent.py").write_text(source)
    return agents


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeServer]:
    with serving_fake() as fake:
        yield fake


@dataclass
class Served:
    """A server process, the URL of its sessions database, and whether its artifacts are
    files (the default) or kept in memory (with ``--session-service-uri``)."""

    process: ServerProcess
    store: str
    files: bool


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, provider: FakeServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("errors")
    env = {"FAKE_MODEL_URL": f"{provider.url}/v1"}
    if request.param == "sqlite":  # the default: SQLite and artifact files under .adk_rx
        with api_server_process(_agents(root), root, env=env) as process:
            yield Served(process, f"sqlite:///{root / '.adk_rx' / 'sessions.db'}", files=True)
        return
    with (
        scratch_schema() as url,
        api_server_process(_agents(root), root, "--session-service-uri", url, env=env) as process,
    ):
        yield Served(process, url, files=False)


@pytest.fixture
def server(served: Served) -> ServerProcess:
    return served.process


def _needs_files(served: Served) -> None:
    if not served.files:
        pytest.skip("with --session-service-uri the server keeps artifacts in memory")


@pytest.fixture
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _session(http: httpx.Client, app: str = "chat") -> str:
    sid = f"s-{uuid.uuid4().hex[:8]}"
    created = http.post(f"/apps/{app}/users/u1/sessions", json={"session_id": sid})
    assert created.status_code == 200, created.text
    return sid


def _stored(http: httpx.Client, sid: str, app: str = "chat") -> list[dict[str, Any]]:
    return http.get(f"/apps/{app}/users/u1/sessions/{sid}").json()["events"]


def _answer(call_id: str, name: str = "get_weather") -> dict[str, Any]:
    response = {"id": call_id, "name": name, "response": {"forecast": "forged"}}
    return {"role": "user", "parts": [{"functionResponse": response}]}


def _run_body(sid: str, message: dict[str, Any], app: str = "chat") -> dict[str, Any]:
    return {"app_name": app, "user_id": "u1", "session_id": sid, "new_message": message}


# -- function responses that answer no open call ----------------------------------------------


def test_a_forged_function_response_answers_400_on_every_run_route_and_stores_nothing(
    http: httpx.Client,
) -> None:
    sid = _session(http)
    forged = _answer("call_forged")
    invocations = f"/apps/chat/users/u1/sessions/{sid}/invocations"

    answers = [
        http.post("/run", json=_run_body(sid, forged)),
        http.post("/run_sse", json=_run_body(sid, forged)),
        http.post(invocations, json={"new_message": forged}),
    ]

    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert "'call_forged' is not in the session" in answer.json()["detail"]
    assert _stored(http, sid) == []
    assert http.post("/run", json=_run_body(sid, user_text("hi"))).status_code == 200


def test_answering_a_call_that_has_its_response_answers_400(http: httpx.Client) -> None:
    sid = _session(http)
    ran = http.post("/run", json=_run_body(sid, user_text("weather Oslo")))
    assert ran.status_code == 200
    [call_id] = [
        part["functionCall"]["id"]
        for event in ran.json()
        for part in event["content"]["parts"]
        if "functionCall" in part
    ]
    before = _stored(http, sid)

    again = http.post("/run", json=_run_body(sid, _answer(call_id)))

    assert again.status_code == 400
    assert f"{call_id!r} already has its response" in again.json()["detail"]
    assert _stored(http, sid) == before


def _completion(text: str) -> Any:
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json_reply({"id": "c", "object": "chat.completion", "model": "m", "choices": [choice]})


def test_after_a_refused_forgery_a_strict_model_still_answers_the_session(
    http: httpx.Client, provider: FakeServer
) -> None:
    sid = _session(http, "strict")
    provider.push(strict_history(_completion("first")), strict_history(_completion("second")))
    assert http.post("/run", json=_run_body(sid, user_text("hi"), "strict")).status_code == 200

    forged = http.post("/run", json=_run_body(sid, _answer("call_1", "lookup"), "strict"))
    after = http.post("/run", json=_run_body(sid, user_text("and now?"), "strict"))

    assert forged.status_code == 400
    assert after.status_code == 200, after.text
    assert [Event.from_dict(e).text() for e in after.json()] == ["second"]


def test_a_forged_response_on_the_live_socket_ends_it_and_is_not_stored(
    server: ServerProcess, http: httpx.Client
) -> None:
    sid = _session(http, "voice")
    url = server.url.replace("http://", "ws://")
    with connect(f"{url}/run_live?app_name=voice&user_id=u1&session_id={sid}") as ws:
        ws.send(json.dumps({"content": user_text("hello")}))
        assert Event.from_json(ws.recv(timeout=30)).text() == "hello"
        ws.send(json.dumps({"content": _answer("call_forged")}))
        frame = json.loads(ws.recv(timeout=30))
        while "error" not in frame:  # the answer to "hello" may come first
            frame = json.loads(ws.recv(timeout=30))

    assert frame["error"].startswith("ConfigurationError: ")
    assert "'call_forged' is not in the session" in frame["error"]
    assert "call_forged" not in json.dumps(_stored(http, sid, "voice"))


# -- artifacts of ids the file store cannot name ----------------------------------------------


def test_sessions_and_users_named_dot_or_dot_dot_are_refused_at_creation(
    http: httpx.Client,
) -> None:
    for sid in (".", ".."):
        created = http.post("/apps/chat/users/u1/sessions", json={"session_id": sid})
        assert created.status_code == 400
        assert "names a directory" in created.json()["detail"]
    assert http.post("/apps/chat/users/%2E%2E/sessions", json={}).status_code == 400


def test_artifacts_of_a_stored_session_named_dot_dot_answer_400_and_it_can_be_deleted(
    served: Served, http: httpx.Client
) -> None:
    _needs_files(served)
    svc = SqlSessionService(served.store)  # a session stored before the server refused the name
    svc.create_session(app_name="chat", user_id="u1", session_id="..").run()
    svc.close()
    base = "/apps/chat/users/u1/sessions/%2E%2E"
    saved = {"filename": "a.txt", "artifact": {"text": "x"}}

    answers = [
        http.get(f"{base}/artifacts"),
        http.get(f"{base}/artifacts/a.txt"),
        http.get(f"{base}/artifacts/a.txt/versions"),
        http.get(f"{base}/artifacts/a.txt/versions/latest"),
        http.post(f"{base}/artifacts", json=saved),
        http.delete(f"{base}/artifacts/a.txt"),
    ]

    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert "invalid session_id '..' for a file artifact store" in answer.json()["detail"]
    assert http.delete(base).status_code == 200
    assert http.get(base).status_code == 404


def test_ids_and_names_too_long_for_a_file_name_answer_400(
    served: Served, http: httpx.Client
) -> None:
    _needs_files(served)
    long_sid = _session(http).ljust(300, "x")
    assert (
        http.post("/apps/chat/users/u1/sessions", json={"session_id": long_sid}).status_code == 200
    )
    wide_name = "é" * 100  # 200 bytes of UTF-8, 600 once percent-encoded
    sid = _session(http)
    cases = [
        (long_sid, "a.txt", "session_id"),
        (sid, wide_name, "filename"),
        (sid, f"user:{wide_name}", "filename"),
    ]
    for session, name, what in cases:
        base = f"/apps/chat/users/u1/sessions/{session}/artifacts"
        saved = http.post(base, json={"filename": name, "artifact": {"text": "x"}})
        loaded = http.get(f"{base}/{name}")
        versions = http.get(f"{base}/{name}/versions")
        for answer in (saved, loaded, versions):
            assert answer.status_code == 400, answer.text
            assert f"{what} " in answer.json()["detail"]
            assert "too long for a file artifact store" in answer.json()["detail"]
    assert http.get(f"/apps/chat/users/u1/sessions/{long_sid}/artifacts").status_code == 400
    assert http.delete(f"/apps/chat/users/u1/sessions/{long_sid}").status_code == 200


# -- the model's provider refuses the request -------------------------------------------------


def test_a_models_http_400_answers_502_with_the_providers_message(
    http: httpx.Client, provider: FakeServer
) -> None:
    sid = _session(http, "strict")
    error = {
        "message": "Invalid 'messages[1].content': string too long.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": None,
    }
    provider.push(json_reply({"error": error}, 400))

    answer = http.post("/run", json=_run_body(sid, user_text("hi"), "strict"))

    assert answer.status_code == 502
    detail = answer.json()["detail"]
    assert "HTTP 400" in detail and "string too long" in detail
    provider.push(_completion("fine"))
    assert http.post("/run", json=_run_body(sid, user_text("again"), "strict")).status_code == 200


def test_a_models_http_400_ends_an_invocations_stream_with_the_providers_message(
    http: httpx.Client, provider: FakeServer
) -> None:
    sid = _session(http, "strict")
    provider.push(json_reply({"error": {"message": "bad tool schema"}}, 400))
    base = f"/apps/strict/users/u1/sessions/{sid}/invocations"

    started = http.post(base, json={"new_message": user_text("hi")})
    frames = parse_frames(http.get(f"{base}/{started.json()['invocation_id']}/events").text)

    end = json.loads(frames[-1].data or "{}")
    assert end["status"] == "failed" and "bad tool schema" in end["error"]


# -- PostgreSQL connections killed before the run started -------------------------------------


@pytest.fixture
def locked_out() -> Iterator[tuple[str, str, sa.Engine]]:
    """A PostgreSQL URL for a role of its own, named by application_name, and an admin
    engine that can kill its connections and lock it out."""
    admin = sa.create_engine(normalize_url(server_url()), poolclass=sa.pool.NullPool)
    role = f"adk_rx_test_{uuid.uuid4().hex[:8]}"
    with scratch_schema() as url:
        schema = sa.make_url(url).query["options"].removeprefix("-csearch_path=")
        with admin.begin() as conn:
            conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
            conn.exec_driver_sql(f'GRANT ALL ON SCHEMA "{schema}" TO "{role}"')
        scoped = normalize_url(url).set(username=role)
        scoped = scoped.update_query_dict({"application_name": role})
        try:
            yield scoped.render_as_string(hide_password=False), role, admin
        finally:
            with admin.begin() as conn:
                conn.exec_driver_sql(f'ALTER ROLE "{role}" LOGIN')
                _kill(conn, role)
    with admin.begin() as conn:
        conn.exec_driver_sql(f'DROP ROLE "{role}"')
    admin.dispose()


def _kill(conn: sa.Connection, name: str) -> int:
    killed = conn.execute(
        sa.text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = :n AND pid <> pg_backend_pid()"
        ),
        {"n": name},
    )
    return int(killed.scalar_one())


def _wait_until_polling_the_turn_lock(admin: sa.Engine, name: str) -> None:
    """Until the server's run waits for the turn lock the test holds (it polls for it)."""
    deadline = time.monotonic() + 60
    query = sa.text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = :n AND query LIKE '%pg_try_advisory_lock%'"
    )
    # Autocommit: pg_stat_activity is read once per transaction.
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        while conn.execute(query, {"n": name}).scalar_one() == 0:
            assert time.monotonic() < deadline, "the run never asked for the turn lock"
            time.sleep(0.01)


@pytest.mark.parametrize("lock_out", [False, True], ids=["reconnects", "refused"])
def test_a_run_whose_connections_were_killed_before_it_started_retries_once_then_503(
    locked_out: tuple[str, str, sa.Engine], tmp_path: Path, lock_out: bool
) -> None:
    url, role, admin = locked_out
    agents = write_agents(tmp_path / "agents", "chat")
    with (
        api_server_process(agents, tmp_path, "--session-service-uri", url) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
        admin.connect() as holder,
    ):
        assert (
            http.post("/apps/chat/users/u1/sessions", json={"session_id": "s"}).status_code == 200
        )
        turn = lock_key(("chat", "u1", "s"))
        holder.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": turn})
        answers: list[httpx.Response] = []
        running = threading.Thread(
            target=lambda: answers.append(http.post("/run", json=_run_body("s", user_text("hi"))))
        )
        running.start()
        _wait_until_polling_the_turn_lock(admin, role)
        with admin.begin() as conn:
            if lock_out:
                conn.exec_driver_sql(f'ALTER ROLE "{role}" NOLOGIN')
            assert _kill(conn, role) >= 1
        holder.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": turn})
        running.join(120)

        [answer] = answers
        if lock_out:
            assert answer.status_code == 503, f"{answer.text}\n{server.output()}"
            assert answer.headers["Retry-After"] == "1"
            with admin.begin() as conn:
                conn.exec_driver_sql(f'ALTER ROLE "{role}" LOGIN')
            answer = http.post("/run", json=_run_body("s", user_text("hi")))
        assert answer.status_code == 200, f"{answer.text}\n{server.output()}"
        assert [e["author"] for e in _stored(http, "s")] == ["user", "assistant"]
