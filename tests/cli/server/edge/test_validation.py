"""What the server refuses at the edge: state clients may not write, non-standard JSON,
oversized or too deep bodies, ids and names a store cannot take, cursors out of range.

Each answer is a 4xx with a message, and nothing of the refused request is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from adk_rx import InMemorySessionService, SqlSessionService
from adk_rx.cli.server import Limits
from tests.cli.server.conftest import BASE
from tests.cli.server_support import user_text
from tests.sessions.postgres import scratch_schema

pytestmark = pytest.mark.asyncio


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity, as JSON.parse does."""

    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


async def new_session(http: httpx.AsyncClient, app: str, user: str = "u1", sid: str = "s1"):
    created = await http.post(f"/apps/{app}/users/{user}/sessions", json={"session_id": sid})
    assert created.status_code == 200, created.text


async def stored(http: httpx.AsyncClient, app: str, user: str = "u1", sid: str = "s1") -> dict:
    found = await http.get(f"/apps/{app}/users/{user}/sessions/{sid}")
    assert found.status_code == 200, found.text
    return strict_json(found.text)


def run_body(app: str, text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "app_name": app,
        "user_id": "u1",
        "session_id": "s1",
        "new_message": user_text(text),
        **extra,
    }


def raw_post(http: httpx.AsyncClient, url: str, body: str | bytes):
    return http.post(url, content=body, headers={"content-type": "application/json"})


# -- app: and user: state -----------------------------------------------------------------
async def test_app_keys_in_a_new_sessions_state_answer_403_and_create_nothing(
    client: httpx.AsyncClient, app_name: str
):
    answer = await client.post(
        f"/apps/{app_name}/users/u1/sessions",
        json={"session_id": "s1", "state": {"app:banner": "hacked", "mine": 1}},
    )
    assert answer.status_code == 403
    assert "app:banner" in answer.json()["detail"]
    assert (await client.get(f"/apps/{app_name}/users/u1/sessions/s1")).status_code == 404


@pytest.mark.parametrize("route", ["/run", "/run_sse", "invocations"])
async def test_app_keys_in_a_runs_state_delta_answer_403_and_reach_no_other_user(
    client: httpx.AsyncClient, app_name: str, route: str
):
    await new_session(client, app_name)
    await new_session(client, app_name, user="u2", sid="other")
    delta = {"app:banner": "every user reads this", "note": "x"}
    if route == "invocations":
        answer = await client.post(
            f"/apps/{app_name}/users/u1/sessions/s1/invocations",
            json={"new_message": user_text("hi"), "state_delta": delta},
        )
    else:
        answer = await client.post(route, json=run_body(app_name, state_delta=delta))
    assert answer.status_code == 403
    assert "app:" in answer.json()["detail"]
    assert (await stored(client, app_name, user="u2", sid="other"))["state"] == {}
    mine = await stored(client, app_name)
    assert mine["state"] == {} and mine["events"] == []  # the run never started


async def test_user_keys_are_written_for_the_path_user_only(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    answer = await client.post("/run", json=run_body(app_name, state_delta={"user:theme": "dark"}))
    assert answer.status_code == 200, answer.text
    await new_session(client, app_name, sid="s2")
    await new_session(client, app_name, user="u2", sid="s3")
    assert (await stored(client, app_name, sid="s2"))["state"]["user:theme"] == "dark"
    assert "user:theme" not in (await stored(client, app_name, user="u2", sid="s3"))["state"]


# -- NaN and Infinity ---------------------------------------------------------------------
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
async def test_non_finite_numbers_answer_400_and_are_not_stored(
    client: httpx.AsyncClient, app_name: str, number: str
):
    created = await raw_post(
        client,
        f"/apps/{app_name}/users/u1/sessions",
        f'{{"session_id": "s0", "state": {{"score": {number}}}}}',
    )
    assert created.status_code == 400
    assert "not JSON" in created.json()["detail"]
    await new_session(client, app_name)
    body = json.dumps(run_body(app_name)).replace('"hi"}]}', '"hi"}]}, "state_delta": {"x": 0}')
    body = body.replace('"x": 0', f'"x": {number}')
    assert (await raw_post(client, "/run", body)).status_code == 400
    assert (await stored(client, app_name))["events"] == []


async def test_state_the_library_stored_with_nan_is_served_as_standard_json(
    make_app: Callable[..., Any], app_name: str
):
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name=app_name,
        user_id="u1",
        session_id="s1",
        state={"ratio": float("nan"), "app:peak": float("inf"), "nested": [float("-inf")]},
    )
    transport = httpx.ASGITransport(app=make_app(session_service=sessions))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        for path in ("/s1", ""):
            answer = await http.get(f"/apps/{app_name}/users/u1/sessions{path}")
            assert answer.status_code == 200
            body = strict_json(answer.text)
        assert body[0]["state"] == {"ratio": None, "app:peak": None, "nested": [None]}


# -- sizes ----------------------------------------------------------------------------------
async def test_a_body_over_the_limit_answers_413_and_stores_nothing(
    make_app: Callable[..., Any], app_name: str
):
    transport = httpx.ASGITransport(app=make_app(limits=Limits(max_body_bytes=2000)))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app_name)
        answer = await http.post("/run", json=run_body(app_name, "x" * 5000))
        assert answer.status_code == 413
        assert "2000 bytes" in answer.json()["detail"]

        async def chunked():  # no Content-Length: counted while read
            for _ in range(10):
                yield b" " * 500

        answer = await http.post(
            "/run", content=chunked(), headers={"content-type": "application/json"}
        )
        assert answer.status_code == 413
        assert (await stored(http, app_name))["events"] == []
        assert (await http.post("/run", json=run_body(app_name, "x" * 500))).status_code == 200


async def test_too_many_parts_or_too_much_state_answer_400(
    make_app: Callable[..., Any], app_name: str
):
    limits = Limits(max_parts=3, max_state_bytes=100)
    transport = httpx.ASGITransport(app=make_app(limits=limits))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app_name)
        message = {"role": "user", "parts": [{"text": "a"}] * 4}
        answer = await http.post("/run", json={**run_body(app_name), "new_message": message})
        assert answer.status_code == 400 and "4 parts" in answer.json()["detail"]
        answer = await http.post("/run", json=run_body(app_name, state_delta={"k": "v" * 200}))
        assert answer.status_code == 400 and "state_delta" in answer.json()["detail"]
        answer = await http.post(
            f"/apps/{app_name}/users/u1/sessions", json={"state": {"k": "v" * 200}}
        )
        assert answer.status_code == 400
        assert (await stored(http, app_name))["events"] == []


@pytest.mark.parametrize("depth", [65, 100_000])
async def test_json_nested_too_deep_answers_400(
    client: httpx.AsyncClient, app_name: str, depth: int
):
    await new_session(client, app_name)
    nested = "[" * depth + "]" * depth
    body = json.dumps(run_body(app_name, state_delta={"k": 0})).replace('"k": 0', f'"k": {nested}')
    answer = await raw_post(client, "/run", body)
    assert answer.status_code == 400
    assert "nested deeper than 64" in answer.json()["detail"]
    assert (await stored(client, app_name))["events"] == []


async def test_json_within_the_depth_limit_is_taken(client: httpx.AsyncClient, app_name: str):
    await new_session(client, app_name)
    nested = "[" * 60 + "]" * 60
    body = json.dumps(run_body(app_name, state_delta={"k": 0})).replace('"k": 0', f'"k": {nested}')
    assert (await raw_post(client, "/run", body)).status_code == 200


# -- 400 where a 500 was --------------------------------------------------------------------
async def test_a_lone_surrogate_in_message_text_answers_400(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    body = json.dumps(run_body(app_name, "PLACEHOLDER")).replace("PLACEHOLDER", "bad \\ud800 x")
    answer = await raw_post(client, "/run", body)
    assert answer.status_code == 400
    assert "surrogate" in answer.json()["detail"]
    paired = json.dumps(run_body(app_name, "PLACEHOLDER")).replace("PLACEHOLDER", "\\ud83d\\ude00")
    assert (await raw_post(client, "/run", paired)).status_code == 200  # a real pair is fine


async def test_a_function_call_part_from_a_client_answers_400(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    message = {
        "role": "user",
        "parts": [{"text": "hi"}, {"function_call": {"name": "get_weather", "args": {}}}],
    }
    answer = await client.post("/run", json={**run_body(app_name), "new_message": message})
    assert answer.status_code == 400
    assert "function_call" in answer.json()["detail"]
    assert (await stored(client, app_name))["events"] == []


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_sessions(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[SqlSessionService]:
    if request.param == "sqlite":
        service = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
        yield service
        service.close()
        return
    with scratch_schema() as url:
        service = SqlSessionService(url)
        yield service
        service.close()


async def test_a_nul_or_control_character_in_an_id_answers_400(
    make_app: Callable[..., Any], app_name: str, sql_sessions: SqlSessionService
):
    transport = httpx.ASGITransport(app=make_app(session_service=sql_sessions))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        sessions = f"/apps/{app_name}/users/u1/sessions"
        for path in (
            f"{sessions}/a%00b",
            f"{sessions}/a%01b/invocations",
            f"/apps/{app_name}/users/u%00/sessions",
        ):
            answer = await http.get(path)
            assert answer.status_code == 400, (path, answer.text)
            assert "control character" in answer.json()["detail"]
        assert (await http.post(sessions, json={"session_id": "a\x00b"})).status_code == 400
        await new_session(http, app_name)
        body = {**run_body(app_name), "session_id": "s1\x00"}
        assert (await http.post("/run", json=body)).status_code == 400
        assert (await http.get(sessions)).json()[0]["id"] == "s1"  # nothing else was created


async def test_a_nul_in_a_state_key_answers_400_and_creates_nothing(
    make_app: Callable[..., Any], app_name: str, sql_sessions: SqlSessionService
):
    # A user: key is a column value in a SQL store, where PostgreSQL refuses NUL (a 503 before).
    transport = httpx.ASGITransport(app=make_app(session_service=sql_sessions))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        answer = await http.post(
            f"/apps/{app_name}/users/u1/sessions",
            json={"session_id": "s1", "state": {"user:a\u0000b": 1, "mine": 1}},
        )
        assert answer.status_code == 400
        assert "NUL" in answer.json()["detail"]
        assert (await http.get(f"/apps/{app_name}/users/u1/sessions/s1")).status_code == 404


@pytest.mark.parametrize(
    ("name", "route"),
    [("%2E%2E", ""), ("%2E%2E", "/versions"), ("a%00b", ""), ("a%00b", "/versions"), ("a%5Cb", "")],
)
async def test_dot_dot_nul_or_backslash_in_an_artifact_route_answers_400(
    client: httpx.AsyncClient, app_name: str, name: str, route: str
):
    await new_session(client, app_name)
    answer = await client.get(f"/apps/{app_name}/users/u1/sessions/s1/artifacts/{name}{route}")
    assert answer.status_code == 400, answer.text


async def test_a_cursor_out_of_range_answers_400_and_the_largest_one_ends_the_stream(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    started = await client.post(
        f"/apps/{app_name}/users/u1/sessions/s1/invocations", json={"new_message": user_text("hi")}
    )
    url = f"/apps/{app_name}/users/u1/sessions/s1/invocations/{started.json()['invocation_id']}"
    for after in (str(2**63), str(2**64), "-1", "1.5", "\u0661"):
        answer = await client.get(f"{url}/events", params={"after": after})
        assert answer.status_code == 400, after
        assert "cursor" in answer.json()["detail"]
    answer = await client.get(f"{url}/events", headers={"last-event-id": str(2**70)})
    assert answer.status_code == 400
    answer = await client.get(f"{url}/events", params={"after": str(2**63 - 1)})
    assert answer.status_code == 200
    assert answer.text.startswith("event: end\n")  # nothing after that cursor; the end frame


async def test_app_keys_through_google_adk_session_routes_answer_403(
    client: httpx.AsyncClient, app_name: str
):
    sessions = f"/apps/{app_name}/users/u1/sessions"
    answer = await client.post(f"{sessions}/s9", json={"app:banner": "x"})  # body is the state
    assert answer.status_code == 403
    await new_session(client, app_name)
    answer = await client.patch(f"{sessions}/s1", json={"stateDelta": {"app:banner": "x"}})
    assert answer.status_code == 403
    answer = await client.patch(f"{sessions}/s1", json={"stateDelta": {"user:lang": "fr"}})
    assert answer.status_code == 200
    assert (await stored(client, app_name))["state"] == {"user:lang": "fr"}


async def test_a_seed_event_with_nul_in_its_author_is_stored_exactly(
    make_app: Callable[..., Any], app_name: str, sql_sessions: SqlSessionService
):
    # The event's id, invocation id and author have columns of their own, where PostgreSQL
    # refuses NUL (a 503 before); the stored event keeps them exactly.
    transport = httpx.ASGITransport(app=make_app(session_service=sql_sessions))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        seed = {"author": "a\u0000b", "invocationId": "i\u00001", "content": user_text("hi")}
        answer = await http.post(
            f"/apps/{app_name}/users/u1/sessions", json={"session_id": "s1", "events": [seed]}
        )
        assert answer.status_code == 200, answer.text
        (event,) = (await stored(http, app_name))["events"]
        assert (event["author"], event["invocationId"]) == ("a\u0000b", "i\u00001")
