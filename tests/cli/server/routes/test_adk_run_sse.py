"""google-adk's ``/run_sse`` details: shared ids of streamed chunks, artifact split, error frames,
``invocation_id`` / ``function_call_event_id`` in the body."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from tests.cli.adk_client import adk, agents_folder, client_for, run_body
from tests.cli.server_support import parse_frames

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("sse")


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(agents[0]) as http:
        await http.post(f"/apps/{agents[1]}/users/u1/sessions", json={"sessionId": "s1"})
        yield http


async def sse(client: httpx.AsyncClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = await client.post("/run_sse", json=body)
    assert response.status_code == 200, response.text
    return [json.loads(f.data) for f in parse_frames(response.text) if f.data]


async def test_streamed_chunks_and_their_final_event_share_one_id(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    events = await sse(client, run_body(agents[1], "hello", streaming=True))
    assert [(e["content"]["parts"][0]["text"], e.get("partial", False)) for e in events] == [
        ("echo: ", True),
        ("hello", True),
        ("echo: hello", False),
    ]
    assert len({e["id"] for e in events}) == 1
    stored = (await client.get(f"/apps/{agents[1]}/users/u1/sessions/s1")).json()["events"]
    assert stored[-1]["id"] == events[0]["id"]


async def test_invocation_stream_cursors_stay_distinct_while_event_ids_repeat(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    path = f"/apps/{agents[1]}/users/u1/sessions/s1/invocations"
    started = await client.post(path, json=run_body(agents[1], "hello", streaming=True))
    iid = started.json()["invocation_id"]
    text = (await client.get(f"{path}/{iid}/events")).text
    frames = [f for f in parse_frames(text) if f.event is None and f.data]
    cursors = [f.id for f in frames]
    assert cursors == sorted(set(cursors)) and len(cursors) == 3
    assert len({json.loads(f.data or "")["id"] for f in frames}) == 1
    resumed = parse_frames((await client.get(f"{path}/{iid}/events?after={cursors[0]}")).text)
    assert [f.id for f in resumed if f.event is None] == cursors[1:]


async def test_an_event_with_content_and_an_artifact_delta_is_sent_as_two_frames(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    events = await sse(client, run_body(agents[1], "note buy milk"))
    with_delta = [i for i, e in enumerate(events) if e.get("actions", {}).get("artifactDelta")]
    (index,) = with_delta
    content_frame, artifact_frame = events[index - 1], events[index]
    assert content_frame["content"]["parts"][0]["functionResponse"]["name"] == "save_note"
    assert content_frame["actions"]["artifactDelta"] == {}
    assert content_frame["actions"]["stateDelta"] == {"last_note": "buy milk"}
    assert "content" not in artifact_frame
    assert artifact_frame["actions"]["artifactDelta"] == {"note.txt": 0}
    assert artifact_frame["id"] == content_frame["id"]
    stored = (await client.get(f"/apps/{agents[1]}/users/u1/sessions/s1")).json()["events"]
    whole = [e for e in stored if e.get("actions", {}).get("artifactDelta")]
    assert len(whole) == 1 and "content" in whole[0]  # the store keeps the event whole


async def test_with_function_call_event_id_the_event_is_sent_whole(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    body = run_body(agents[1], "note tea", functionCallEventId="e-123")
    events = await sse(client, body)
    (whole,) = [e for e in events if e.get("actions", {}).get("artifactDelta")]
    assert whole["content"]["parts"][0]["functionResponse"]["name"] == "save_note"


async def test_a_failed_run_ends_with_google_adks_error_frame(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    events = await sse(client, run_body(agents[1], "fail"))
    error = events[-1]
    assert "failed on purpose" in error["error"]
    details = error["error_details"]
    assert error["error"] == f"{details['error_type']}: {details['error_message']}"
    assert details["error_type"] == "ModelError" and isinstance(details["timestamp"], float)


async def test_an_invocation_id_in_the_body_is_not_ignored(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    before = (await client.get(f"/apps/{agents[1]}/users/u1/sessions/s1")).json()["events"]
    response = await client.post(
        "/run_sse", json=run_body(agents[1], "hello", invocationId="e-unknown")
    )
    assert response.status_code in (400, 404)
    assert "invocation" in response.json()["detail"]
    after = (await client.get(f"/apps/{agents[1]}/users/u1/sessions/s1")).json()["events"]
    assert after == before
    wrong = await client.post("/run_sse", json=run_body(agents[1], "hi", invocationId=7))
    assert wrong.status_code == 400


async def test_frames_parse_as_google_adk_events(
    client: httpx.AsyncClient, agents: tuple[Path, str]
):
    event_model = adk("events.event").Event
    events = await sse(client, run_body(agents[1], "weather Oslo", streaming=True))
    parsed = [event_model.model_validate(e) for e in events]
    assert parsed[0].get_function_calls()[0].name == "get_weather"
    assert parsed[-1].content.parts[0].text == "It is sunny in Oslo."
