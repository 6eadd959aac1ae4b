"""Deleting a session deletes what was kept for it: artifacts and memories, in every store."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from google.genai import types

from adk_rx import (
    FileArtifactService,
    InMemoryArtifactService,
    InMemoryMemoryService,
    InMemorySessionService,
    LlmAgent,
    Runner,
)
from adk_rx.memory.sql import SqlMemoryService
from adk_rx.testing import ScriptedLlm


def _part(text: str) -> types.Part:
    return types.Part(text=text)


@pytest.fixture(params=["in_memory", "file"])
def artifacts(request, tmp_path: Path):
    if request.param == "in_memory":
        return InMemoryArtifactService()
    return FileArtifactService(tmp_path / "artifacts")


@pytest.fixture(params=["in_memory", "sqlite"])
def memory(request, tmp_path: Path):
    if request.param == "in_memory":
        yield InMemoryMemoryService()
        return
    service = SqlMemoryService(f"sqlite:///{tmp_path / 'memory.db'}")
    yield service
    service.close()


def test_runner_delete_session_deletes_its_artifacts_and_memories(artifacts, memory):
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="helper", model=ScriptedLlm(["noted the tea order"] * 2)),
        session_service=InMemorySessionService(),
        artifact_service=artifacts,
        memory_service=memory,
    )
    sessions = runner.session_service
    for sid in ("gone", "kept"):
        sessions.create_session(app_name="app", user_id="u", session_id=sid).run()
        list(runner.run(user_id="u", session_id=sid, new_message="tea please"))
        artifacts.save_artifact(
            app_name="app", user_id="u", session_id=sid, filename="note.txt", artifact=_part(sid)
        ).run()
        memory.add_session_to_memory(
            sessions.get_session(app_name="app", user_id="u", session_id=sid).run()
        ).run()
    artifacts.save_artifact(
        app_name="app", user_id="u", session_id="gone", filename="user:prefs", artifact=_part("p")
    ).run()

    runner.delete_session(user_id="u", session_id="gone").run()

    assert sessions.get_session(app_name="app", user_id="u", session_id="gone").run() is None
    assert artifacts.list_artifact_keys(app_name="app", user_id="u", session_id="gone").run() == [
        "user:prefs"
    ]
    kept = artifacts.list_artifact_keys(app_name="app", user_id="u", session_id="kept").run()
    assert kept == ["note.txt", "user:prefs"]
    found = memory.search_memory(app_name="app", user_id="u", query="tea").run()
    assert found.memories  # the other session's memories stay
    assert all("gone" not in str(m) for m in found.memories)
    assert len(found.memories) == 2  # "tea please" and the reply, of the kept session only


@pytest.mark.asyncio
async def test_the_servers_delete_route_deletes_the_sessions_artifacts(tmp_path: Path):
    from adk_rx.cli.server import create_app
    from tests.cli.server_support import unique_app, write_agents

    name = unique_app("lifecycle")
    root = write_agents(tmp_path / "agents", name)
    artifacts = InMemoryArtifactService()
    server = create_app(root, session_service=InMemorySessionService(), artifact_service=artifacts)
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        await client.post(f"/apps/{name}/users/u/sessions/s1", json={})
        await artifacts.save_artifact(
            app_name=name, user_id="u", session_id="s1", filename="a.txt", artifact=_part("x")
        )
        deleted = await client.delete(f"/apps/{name}/users/u/sessions/s1")

    assert deleted.status_code == 200
    assert await artifacts.list_artifact_keys(app_name=name, user_id="u", session_id="s1") == []
