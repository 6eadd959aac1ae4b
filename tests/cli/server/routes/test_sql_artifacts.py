"""Artifacts in the session database: a server given a SQL session service keeps them there,
so they outlive the process and every server on the database serves them; scoped to their
user and session, with names and sizes checked."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from adk_rx import SqlArtifactService, SqlSessionService
from adk_rx.cli.server import Limits, create_app
from tests.cli.server.conftest import BASE
from tests.cli.server_support import unique_app, write_agents

pytestmark = pytest.mark.asyncio


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'agents.db'}"
    else:
        yield request.getfixturevalue("fresh_postgres_url")


def server(root: Path, database: str, **options) -> httpx.AsyncClient:
    app = create_app(root, session_service=SqlSessionService(database), **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


def png(data: bytes) -> dict:
    return {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(data).decode()}}


async def test_artifacts_outlive_the_server_and_reach_every_server_on_the_database(
    tmp_path: Path, database: str
):
    app = unique_app("sqlart")
    root = write_agents(tmp_path / "agents", app)
    base = f"/apps/{app}/users/u1/sessions/s1/artifacts"
    async with server(root, database) as first:
        assert (
            await first.post(f"/apps/{app}/users/u1/sessions", json={"sessionId": "s1"})
        ).is_success
        saved = await first.post(base, json={"filename": "pic.png", "artifact": png(b"\x89PNG1")})
        assert saved.status_code == 200, saved.text
        await first.post(base, json={"filename": "user:avatar.png", "artifact": png(b"me")})
    async with server(root, database) as second:  # a restart, or another replica
        loaded = (await second.get(f"{base}/pic.png/versions/latest")).json()
        assert base64.b64decode(loaded["inlineData"]["data"]) == b"\x89PNG1"
        assert loaded["inlineData"]["mimeType"] == "image/png"
        assert (await second.get(base)).json() == ["pic.png", "user:avatar.png"]
    store = SqlArtifactService(database)
    keys = store.list_artifact_keys(app_name=app, user_id="u1", session_id="s1").run()
    assert keys == ["pic.png", "user:avatar.png"]
    store.close()


async def test_another_users_artifacts_bad_names_and_oversize_bodies_are_refused(
    tmp_path: Path, database: str
):
    app = unique_app("sqlart")
    root = write_agents(tmp_path / "agents", app)
    tokens = {"t1": "u1", "t2": "u2"}
    limits = Limits(max_body_bytes=4096)
    async with server(root, database, tokens=tokens, limits=limits) as http:
        one = {"Authorization": "Bearer t1"}
        two = {"Authorization": "Bearer t2"}
        for user, headers in (("u1", one), ("u2", two)):
            created = await http.post(
                f"/apps/{app}/users/{user}/sessions", json={"sessionId": "s1"}, headers=headers
            )
            assert created.is_success
        mine = f"/apps/{app}/users/u1/sessions/s1/artifacts"
        theirs = f"/apps/{app}/users/u2/sessions/s1/artifacts"
        saved = await http.post(
            mine, json={"filename": "secret.txt", "artifact": {"text": "s"}}, headers=one
        )
        assert saved.status_code == 200
        # u2 reaches neither u1's path nor, through its own, u1's file.
        assert (await http.get(f"{mine}/secret.txt/versions/0", headers=two)).status_code == 404
        assert (await http.get(f"{theirs}/secret.txt/versions/0", headers=two)).status_code == 404
        assert (await http.get(theirs, headers=two)).json() == []
        for name in ("../secret.txt", "a/b", "user:../x", "x\x00y", "", "."):
            bad = await http.post(
                mine, json={"filename": name, "artifact": {"text": "s"}}, headers=one
            )
            assert bad.status_code in (400, 422), (name, bad.status_code)
        big = {"filename": "big.bin", "artifact": png(b"x" * 8192)}
        assert (await http.post(mine, json=big, headers=one)).status_code == 413
        assert (await http.get(mine, headers=one)).json() == ["secret.txt"]
