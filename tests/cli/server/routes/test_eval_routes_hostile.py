"""The eval routes as a hostile client sees them, against a real ``adk-rx api-server`` with
bearer tokens, on SQLite and on PostgreSQL sessions: another user's sets and results, ids
that try to leave their folder, malformed and oversize bodies, concurrent writers, and the
sets shipped in the app folder, which no client may change. Last, where a server without
tokens keeps its one local user's sets: its data directory."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types

from adk_rx.evaluation import EvalCase, EvalInvocation, EvalSet
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text, write_agents
from tests.sessions.postgres import scratch_schema

pytestmark = pytest.mark.timeout(180)

APP = "evalapp"
DEV = f"/dev/apps/{APP}"
MAX_BODY = 16_384
TOKENS = {"alice": "ta", "bob": "tb"}


@dataclass(frozen=True)
class Served:
    server: ServerProcess
    root: Path  # the working folder: agents/ and the data directory .adk_rx/

    @property
    def app_folder(self) -> Path:
        return self.root / "agents" / APP


def shipped_set() -> EvalSet:
    hello = EvalInvocation(
        user_content=types.Content.model_validate(user_text("hello")),
        final_response=types.Content(role="model", parts=[types.Part(text="echo: hello")]),
    )
    return EvalSet(
        eval_set_id="shipped", eval_cases=[EvalCase(eval_id="hello", conversation=[hello])]
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    root = tmp_path_factory.mktemp(f"hostile_evals_{request.param}")
    agents = write_agents(root / "agents", APP)
    shipped_set().save(agents / APP / "shipped.evalset.json")
    options = ["--max-body-bytes", str(MAX_BODY)]
    tokens = ",".join(f"{token}={user}" for user, token in TOKENS.items())
    with contextlib.ExitStack() as stack:
        if request.param == "postgresql":
            options += ["--session-service-uri", stack.enter_context(scratch_schema())]
        server = stack.enter_context(
            api_server_process(agents, root, *options, env={"ADK_RX_TOKENS": tokens})
        )
        yield Served(server, root)


def client(served: Served, user: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    return httpx.Client(base_url=served.server.url, headers=headers, timeout=60)


@pytest.fixture
def alice(served: Served) -> Iterator[httpx.Client]:
    with client(served, "alice") as http:
        yield http


@pytest.fixture
def bob(served: Served) -> Iterator[httpx.Client]:
    with client(served, "bob") as http:
        yield http


def fresh(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def recorded_session(http: httpx.Client, user: str, text: str = "weather Oslo") -> str:
    sid = fresh("s")
    assert http.post(f"/apps/{APP}/users/{user}/sessions/{sid}", json={}).status_code == 200
    body = {"app_name": APP, "user_id": user, "session_id": sid, "new_message": user_text(text)}
    ran = http.post("/run", json=body)
    assert ran.status_code == 200, ran.text
    return sid


def new_set(http: httpx.Client) -> str:
    set_id = fresh("set")
    created = http.post(f"{DEV}/eval_sets/{set_id}")
    assert created.status_code == 200, created.text
    return set_id


def add(http: httpx.Client, set_id: str, eval_id: str, user: str, sid: str) -> httpx.Response:
    body = {"eval_id": eval_id, "session_id": sid, "user_id": user}
    return http.post(f"{DEV}/eval_sets/{set_id}/add_session", json=body)


def assert_refused(answer: httpx.Response, status: int) -> None:
    assert answer.status_code == status, answer.text
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and detail


# -- scoped to the caller ---------------------------------------------------------------------
def test_another_users_set_and_results_answer_404_and_stay_intact(
    alice: httpx.Client, bob: httpx.Client
) -> None:
    set_id = new_set(alice)
    assert add(alice, set_id, "oslo", "alice", recorded_session(alice, "alice")).status_code == 200
    ran = alice.post(f"{DEV}/eval_sets/{set_id}/run_eval", json={})
    assert ran.status_code == 200, ran.text
    [result_id] = [r for r in alice.get(f"{DEV}/eval_results").json() if r.startswith(set_id)]

    assert set_id not in bob.get(f"{DEV}/eval_sets").json()
    assert set_id not in bob.get(f"{DEV}/eval-sets").json()["eval_set_ids"]
    assert result_id not in bob.get(f"{DEV}/eval_results").json()
    bobs_session = recorded_session(bob, "bob")
    for answer in (
        bob.get(f"{DEV}/eval_sets/{set_id}/evals"),
        bob.get(f"{DEV}/eval_sets/{set_id}/evals/oslo"),
        bob.delete(f"{DEV}/eval_sets/{set_id}/evals/oslo"),
        add(bob, set_id, "mine", "bob", bobs_session),
        bob.post(f"{DEV}/eval-sets/{set_id}/add-session", json={}),
        bob.post(f"{DEV}/eval_sets/{set_id}/run_eval", json={}),
        bob.get(f"{DEV}/eval_results/{result_id}"),
    ):
        assert_refused(answer, 404)
        assert "oslo" not in answer.text and "Oslo" not in answer.text

    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == ["oslo"]
    case = alice.get(f"{DEV}/eval_sets/{set_id}/evals/oslo").json()
    assert case["conversation"][0]["user_content"]["parts"][0]["text"] == "weather Oslo"
    assert alice.get(f"{DEV}/eval_results/{result_id}").status_code == 200


def test_the_same_set_id_is_a_separate_set_for_each_user(
    alice: httpx.Client, bob: httpx.Client
) -> None:
    set_id = new_set(alice)

    assert bob.post(f"{DEV}/eval_sets/{set_id}").status_code == 200
    assert add(bob, set_id, "b", "bob", recorded_session(bob, "bob")).status_code == 200

    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == []
    assert bob.get(f"{DEV}/eval_sets/{set_id}/evals").json() == ["b"]


def test_add_session_takes_only_the_callers_own_sessions(
    alice: httpx.Client, bob: httpx.Client
) -> None:
    set_id = new_set(alice)
    bobs = recorded_session(bob, "bob")

    assert_refused(add(alice, set_id, "c", "bob", bobs), 404)
    assert_refused(add(alice, set_id, "c", "alice", bobs), 404)
    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == []


def test_sets_shipped_with_the_app_run_for_everyone_and_no_client_writes_the_app_folder(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    shipped = served.app_folder / "shipped.evalset.json"
    before = shipped.read_bytes()
    for http in (alice, bob):
        assert "shipped" in http.get(f"{DEV}/eval_sets").json()
        assert http.get(f"{DEV}/eval_sets/shipped/evals").json() == ["hello"]
        ran = http.post(f"{DEV}/eval_sets/shipped/run_eval", json={"eval_ids": ["hello"]})
        assert ran.status_code == 200, ran.text
        assert [r["final_eval_status"] for r in ran.json()] == [1]

    sid = recorded_session(alice, "alice")
    for answer in (
        alice.post(f"{DEV}/eval_sets/shipped"),
        alice.post(f"{DEV}/eval-sets", json={"eval_set": {"eval_set_id": "shipped"}}),
        add(alice, "shipped", "mine", "alice", sid),
        alice.delete(f"{DEV}/eval_sets/shipped/evals/hello"),
    ):
        assert_refused(answer, 403)
        assert "read-only" in answer.json()["detail"]
    mine = new_set(alice)
    assert add(alice, mine, "c", "alice", sid).status_code == 200

    assert shipped.read_bytes() == before
    assert [p.name for p in served.app_folder.glob("*.evalset.json")] == [shipped.name]
    assert not (served.app_folder / ".adk").exists()  # results went to the data directory
    own = served.root / ".adk_rx" / "evals" / APP / "users" / "alice" / f"{mine}.evalset.json"
    assert json.loads(own.read_text())["eval_cases"][0]["eval_id"] == "c"


# -- ids and bodies ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "set_id", ["..", "%2E%2E", "..%2F..%2Fescape", "a%00b", "a%5Cb", ".hidden", "x" * 200]
)
def test_ids_that_could_leave_the_folder_are_refused(
    served: Served, alice: httpx.Client, set_id: str
) -> None:
    for answer in (
        alice.post(f"{DEV}/eval_sets/{set_id}"),
        alice.get(f"{DEV}/eval_sets/{set_id}/evals"),
        alice.post(f"{DEV}/eval_sets/{set_id}/run_eval", json={}),
        alice.get(f"{DEV}/eval_results/{set_id}"),
    ):
        assert answer.status_code in (400, 404), (set_id, answer.status_code, answer.text)
    assert not list(served.root.rglob("*escape*"))


def test_ids_in_bodies_that_could_leave_the_folder_answer_400(
    served: Served, alice: httpx.Client
) -> None:
    set_id = new_set(alice)
    sid = recorded_session(alice, "alice")
    for bad in ("../../escape", "a/escape", "..", "", "a\x00escape", "\\escape", 7, None):
        created = alice.post(f"{DEV}/eval-sets", json={"eval_set": {"eval_set_id": bad}})
        assert_refused(created, 400)
        assert_refused(add(alice, set_id, bad, "alice", sid), 400)  # type: ignore[arg-type]
    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == []
    assert not list(served.root.rglob("*escape*"))


_BAD_BODIES = {
    "create": (
        "/eval-sets",
        [
            b"{",
            b"[]",
            b'"eval_set"',
            b"NaN",
            b"{}",
            b'{"eval_set": "x"}',
            b'{"eval_set": null}',
            b'{"eval_set": []}',
            b'{"eval_set": {"eval_set_id": 5}}',
            b'{"eval_set": {"name": "no id"}}',
        ],
    ),
    "create_by_path": ("/eval_sets/{fresh}", [b"{", b"[]", b'"x"', b"NaN"]),
    "add_session": (
        "/eval_sets/{set}/add_session",
        [
            b"{",
            b"[1, 2]",
            b"{}",
            b'{"eval_id": "c"}',
            b'{"eval_id": "c", "session_id": 5, "user_id": "alice"}',
            b'{"eval_id": "c", "session_id": "s", "user_id": ["alice"]}',
            b'{"eval_id": ["c"], "session_id": "s", "user_id": "alice"}',
        ],
    ),
    "add_session_dashed": ("/eval-sets/{set}/add-session", [b"{", b"null", b'{"evalId": 1}']),
    "run_eval": (
        "/eval_sets/{set}/run_eval",
        [
            b"{",
            b"[]",
            b'{"eval_ids": "c"}',
            b'{"eval_ids": [1]}',
            b'{"eval_metrics": {}}',
            b'{"eval_metrics": ["response_match_score"]}',
            b'{"eval_metrics": [{"metric_name": 5}]}',
            b'{"eval_metrics": [{"threshold": 0.5}]}',
            b'{"eval_metrics": [{"metric_name": "no_such_metric", "threshold": 0.5}]}',
            b'{"eval_metrics": [{"metric_name": "response_match_score", "threshold": "high"}]}',
            b'{"eval_metrics": [{"metric_name": "response_match_score", "threshold": true}]}',
        ],
    ),
}


@pytest.mark.parametrize("route", sorted(_BAD_BODIES))
def test_every_malformed_body_answers_400_with_a_reason(alice: httpx.Client, route: str) -> None:
    set_id = new_set(alice)
    assert add(alice, set_id, "c", "alice", recorded_session(alice, "alice")).status_code == 200
    template, bodies = _BAD_BODIES[route]
    for body in bodies:
        path = DEV + template.format(set=set_id, fresh=fresh("set"))
        answer = alice.post(path, content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400, (route, body, answer.status_code, answer.text)
        assert answer.json()["detail"], (route, body)
    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == ["c"]
    if route == "run_eval":  # well formed, but the set has no such case: as reading it
        missing = alice.post(f"{DEV}/eval_sets/{set_id}/run_eval", json={"eval_ids": ["nope"]})
        assert missing.status_code == 404 and "nope" in missing.json()["detail"]


@pytest.mark.parametrize("chunked", [False, True], ids=["sized", "chunked"])
def test_every_oversize_body_answers_413(alice: httpx.Client, chunked: bool) -> None:
    set_id = new_set(alice)
    padding = json.dumps({"eval_id": "c", "pad": "x" * MAX_BODY}).encode()
    for template in (
        "/eval-sets",
        "/eval_sets/{fresh}",
        "/eval_sets/{set}/add_session",
        "/eval-sets/{set}/add-session",
        "/eval_sets/{set}/run_eval",
    ):
        path = DEV + template.format(set=set_id, fresh=fresh("set"))
        content = iter([padding]) if chunked else padding
        answer = alice.post(path, content=content)
        assert_refused(answer, 413)
    assert fresh("set") not in alice.get(f"{DEV}/eval_sets").json()


# -- concurrent writers -----------------------------------------------------------------------
async def _at_once(
    served: Served, user: str, requests: Sequence[tuple[str, str, Any]]
) -> list[int]:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    async with httpx.AsyncClient(base_url=served.server.url, headers=headers, timeout=120) as http:
        answers = await asyncio.gather(
            *(http.request(method, path, json=body) for method, path, body in requests)
        )
    return [answer.status_code for answer in answers]


def test_twenty_concurrent_adds_to_one_set_keep_every_case(
    served: Served, alice: httpx.Client
) -> None:
    set_id = new_set(alice)
    sid = recorded_session(alice, "alice")
    path = f"{DEV}/eval_sets/{set_id}/add_session"
    adds = [
        ("POST", path, {"eval_id": f"c{i:02}", "session_id": sid, "user_id": "alice"})
        for i in range(20)
    ]

    statuses = asyncio.run(_at_once(served, "alice", adds))

    assert statuses == [200] * 20
    assert alice.get(f"{DEV}/eval_sets/{set_id}/evals").json() == [f"c{i:02}" for i in range(20)]


def test_concurrent_creates_of_one_set_make_it_once(served: Served, alice: httpx.Client) -> None:
    set_id = fresh("set")
    creates = [("POST", f"{DEV}/eval_sets/{set_id}", None)] * 10

    statuses = asyncio.run(_at_once(served, "alice", creates))

    assert sorted(statuses) == [200] + [409] * 9
    assert alice.get(f"{DEV}/eval_sets").json().count(set_id) == 1


def test_concurrent_runs_of_one_set_keep_every_result(served: Served, alice: httpx.Client) -> None:
    set_id = new_set(alice)
    sid = recorded_session(alice, "alice", "hi")
    assert add(alice, set_id, "c", "alice", sid).status_code == 200
    runs = [("POST", f"{DEV}/eval_sets/{set_id}/run_eval", {})] * 4

    statuses = asyncio.run(_at_once(served, "alice", runs))

    assert statuses == [200] * 4
    results = [r for r in alice.get(f"{DEV}/eval_results").json() if r.startswith(set_id)]
    assert len(results) == 4


# -- the data directory -----------------------------------------------------------------------
@pytest.mark.parametrize("given_by", ["option", "environment"])
def test_the_data_directory_holds_the_sessions_and_the_local_users_eval_sets(
    tmp_path: Path, given_by: str
) -> None:
    agents = write_agents(tmp_path / "agents", APP)
    data = tmp_path / "data"
    options = ("--data-dir", str(data)) if given_by == "option" else ()
    env = {"ADK_RX_DATA_DIR": str(data)} if given_by == "environment" else {}
    with (
        api_server_process(agents, tmp_path, *options, env=env) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        set_id = new_set(http)
        assert add(http, set_id, "c", "u1", recorded_session(http, "u1")).status_code == 200

    assert (data / "sessions.db").is_file()
    own = data / "evals" / APP / "local" / f"{set_id}.evalset.json"
    assert json.loads(own.read_text())["eval_cases"][0]["eval_id"] == "c"
    assert not (tmp_path / ".adk_rx").exists()
    assert list((agents / APP).glob("*.evalset.json")) == []
    assert not (agents / APP / ".adk").exists()
