"""google-adk's session writes: create with state and seed events, PATCH stateDelta, DELETE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.cli.adk_client import adk, agents_folder, client_for, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("sessions")


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(agents[0]) as http:
        yield http


@pytest.fixture
def base(agents: tuple[Path, str]) -> str:
    return f"/apps/{agents[1]}/users/u1/sessions"


SEED = [
    {"author": "user", "content": {"role": "user", "parts": [{"text": "hello"}]}},
    {
        "author": "assistant",
        "content": {
            "role": "model",
            "parts": [
                {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}}
            ],
        },
    },
    {
        "author": "assistant",
        "content": {
            "role": "user",
            "parts": [{"functionResponse": {"id": "c1", "name": "get_weather", "response": {}}}],
        },
    },
]


async def test_create_takes_state_and_stores_seed_events_in_order(
    client: httpx.AsyncClient, base: str
):
    response = await client.post(base, json={"sessionId": "s1", "state": {"k": 1}, "events": SEED})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["state"] == {"k": 1}
    assert [e["author"] for e in body["events"]] == ["user", "assistant", "assistant"]
    got = (await client.get(f"{base}/s1")).json()
    assert got["events"][0]["content"]["parts"] == [{"text": "hello"}]
    assert got["events"][1]["content"]["parts"][0]["functionCall"]["name"] == "get_weather"


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"author": "user", "actions": {"stateDelta": {"a": 1}}}, "event actions"),
        ({"author": "a", "longRunningToolIds": ["c1"]}, "long-running"),
        (
            {
                "author": "a",
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "adk_request_confirmation", "args": {}}}],
                },
            },
            "runtime's own function calls",
        ),
        ({"author": "a", "partial": True}, "partial"),
        ({"author": 7}, "not a valid event"),
    ],
)
async def test_create_refuses_seed_events_only_the_runtime_may_write(
    client: httpx.AsyncClient, base: str, event: dict, reason: str
):
    response = await client.post(base, json={"sessionId": "bad", "events": [SEED[0], event]})
    assert response.status_code == 400
    assert "event 1" in response.json()["detail"] and reason in response.json()["detail"]
    assert (await client.get(f"{base}/bad")).status_code == 404  # nothing was created


async def test_post_with_an_id_takes_the_body_as_the_initial_state(
    client: httpx.AsyncClient, base: str
):
    response = await client.post(f"{base}/s2", json={"topic": "tea", "n": 2})
    assert response.status_code == 200
    assert response.json()["id"] == "s2"
    assert (await client.get(f"{base}/s2")).json()["state"] == {"topic": "tea", "n": 2}
    empty = await client.post(f"{base}/s3")
    assert empty.status_code == 200 and empty.json()["state"] == {}


async def test_patch_applies_a_state_delta_as_a_user_event(client: httpx.AsyncClient, base: str):
    await client.post(base, json={"sessionId": "s1", "state": {"keep": 1}})
    meta = {"__session_metadata__": {"displayName": "Tea chat"}}
    response = await client.patch(f"{base}/s1", json={"stateDelta": meta})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["state"] == {"keep": 1, **meta}
    (event,) = body["events"]
    assert event["author"] == "user" and event["invocationId"].startswith("p-")
    assert event["actions"]["stateDelta"] == meta
    snake = await client.patch(f"{base}/s1", json={"state_delta": {"keep": 2}})
    assert snake.json()["state"]["keep"] == 2
    assert (await client.get(f"{base}/s1")).json()["state"]["keep"] == 2


async def test_patch_rejects_a_missing_delta_and_an_unknown_session(
    client: httpx.AsyncClient, base: str
):
    await client.post(base, json={"sessionId": "s1"})
    assert (await client.patch(f"{base}/s1", json={})).status_code == 400
    assert (await client.patch(f"{base}/s1", json={"stateDelta": [1]})).status_code == 400
    assert (await client.patch(f"{base}/none", json={"stateDelta": {}})).status_code == 404


async def test_delete_answers_200_null_like_google_adk(client: httpx.AsyncClient, base: str):
    await client.post(base, json={"sessionId": "s1"})
    response = await client.delete(f"{base}/s1")
    assert response.status_code == 200 and response.json() is None
    assert (await client.get(f"{base}/s1")).status_code == 404
    assert (await client.delete(f"{base}/s1")).status_code == 404


async def test_created_patched_and_run_sessions_parse_as_google_adk_sessions(
    client: httpx.AsyncClient, base: str, agents: tuple[Path, str]
):
    session_model = adk("sessions.session").Session
    created = (await client.post(base, json={"sessionId": "s1", "events": SEED})).json()
    patched = (await client.patch(f"{base}/s1", json={"stateDelta": {"x": 1}})).json()
    ran = await client.post("/run", json=run_body(agents[1], "weather Paris"))
    assert ran.status_code == 200, ran.text
    after_run = (await client.get(f"{base}/s1")).json()
    for body in (created, patched, after_run):
        parsed = session_model.model_validate(body)
        assert parsed.id == "s1" and len(parsed.events) == len(body["events"])
    assert session_model.model_validate(after_run).state == {
        "x": 1,
        "last_reply": "It is sunny in Paris.",
    }


async def test_seed_events_and_patches_persist_in_a_sql_store(
    agents: tuple[Path, str], tmp_path: Path
):
    from adk_rx import SqlSessionService

    store = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    base = f"/apps/{agents[1]}/users/u1/sessions"
    async with client_for(agents[0], session_service=store) as http:
        created = await http.post(base, json={"sessionId": "s1", "events": SEED})
        patched = await http.patch(f"{base}/s1", json={"stateDelta": {"topic": "tea"}})
        assert created.status_code == 200 and patched.status_code == 200
    reopened = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    session = reopened.get_session(app_name=agents[1], user_id="u1", session_id="s1").run()
    assert [e.author for e in session.events] == ["user", "assistant", "assistant", "user"]
    assert session.state == {"topic": "tea"}
    reopened.close()


async def test_patch_memory_adds_the_session_to_the_memory_service(
    client: httpx.AsyncClient, base: str, agents: tuple[Path, str]
):
    await client.post(base, json={"sessionId": "s1", "events": SEED})
    memory = f"/apps/{agents[1]}/users/u1/memory"
    added = await client.patch(memory, json={"session_id": "s1"})
    assert added.status_code == 200 and added.json() is None
    assert (await client.patch(memory, json={"sessionId": "none"})).status_code == 404
    assert (await client.patch(memory, json={})).status_code == 400
