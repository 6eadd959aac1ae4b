"""google-adk's artifact routes: load a version, metadata, save and delete."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.cli.adk_client import adk, agents_folder, client_for, run_body

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("artifacts")


@pytest_asyncio.fixture
async def client(agents: tuple[Path, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(agents[0]) as http:
        await http.post(f"/apps/{agents[1]}/users/u1/sessions", json={"sessionId": "s1"})
        yield http


@pytest.fixture
def base(agents: tuple[Path, str]) -> str:
    return f"/apps/{agents[1]}/users/u1/sessions/s1/artifacts"


async def test_a_version_loads_by_number_and_as_latest(
    client: httpx.AsyncClient, base: str, agents: tuple[Path, str]
):
    for text in ("first", "second"):
        ran = await client.post("/run", json=run_body(agents[1], f"note {text}"))
        assert ran.status_code == 200
    assert (await client.get(f"{base}/note.txt/versions/0")).json() == {"text": "first"}
    assert (await client.get(f"{base}/note.txt/versions/1")).json() == {"text": "second"}
    assert (await client.get(f"{base}/note.txt/versions/latest")).json() == {"text": "second"}
    assert (await client.get(f"{base}/note.txt/versions/7")).status_code == 404
    assert (await client.get(f"{base}/note.txt/versions/x")).status_code == 422


async def test_metadata_records_versions_with_the_time_their_event_saved_them(
    client: httpx.AsyncClient, base: str, agents: tuple[Path, str]
):
    await client.post("/run", json=run_body(agents[1], "note tea"))
    session = (await client.get(base.removesuffix("/artifacts"))).json()
    saved_at = next(
        e["timestamp"] for e in session["events"] if e.get("actions", {}).get("artifactDelta")
    )
    records = (await client.get(f"{base}/note.txt/versions/metadata")).json()
    one = (await client.get(f"{base}/note.txt/versions/0/metadata")).json()
    latest = (await client.get(f"{base}/note.txt/versions/latest/metadata")).json()
    assert records == [one] and latest == one
    assert one["version"] == 0 and one["createTime"] == saved_at
    assert one["customMetadata"] == {}
    assert one["canonicalUri"].endswith("/sessions/s1/artifacts/note.txt/versions/0")
    model = adk("artifacts.base_artifact_service").ArtifactVersion
    assert model.model_validate(one).version == 0
    assert (await client.get(f"{base}/none.txt/versions/0/metadata")).status_code == 404


async def test_save_answers_an_artifact_version_and_delete_removes_every_version(
    client: httpx.AsyncClient, base: str
):
    data = base64.b64encode(b"\x89PNG").decode()
    part = {"inlineData": {"mimeType": "image/png", "data": data}}
    first = await client.post(base, json={"filename": "pic.png", "artifact": part})
    second = await client.post(base, json={"filename": "pic.png", "artifact": part})
    assert first.status_code == 200, first.text
    assert (first.json()["version"], second.json()["version"]) == (0, 1)
    assert first.json()["mimeType"] == "image/png"
    loaded = (await client.get(f"{base}/pic.png/versions/1")).json()
    assert loaded["inlineData"]["data"].rstrip("=") == data.rstrip("=")
    assert (await client.get(f"{base}/pic.png/versions")).json() == [0, 1]
    deleted = await client.delete(f"{base}/pic.png")
    assert deleted.status_code == 200 and deleted.json() is None
    assert (await client.get(f"{base}/pic.png/versions")).json() == []


async def test_save_rejects_bad_bodies_and_metadata_it_cannot_keep(
    client: httpx.AsyncClient, base: str
):
    text = {"text": "hi"}
    assert (await client.post(base, json={"artifact": text})).status_code == 400
    assert (await client.post(base, json={"filename": "a.txt"})).status_code == 400
    bad_name = await client.post(base, json={"filename": "../a", "artifact": text})
    assert bad_name.status_code == 400
    meta = {"filename": "a.txt", "artifact": text, "customMetadata": {"k": "v"}}
    assert (await client.post(base, json=meta)).status_code == 400
    assert (await client.get(f"{base}/a.txt/versions")).json() == []
