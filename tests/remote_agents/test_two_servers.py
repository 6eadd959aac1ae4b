"""adk_rx calling adk_rx across two real ``adk-rx api-server`` processes: the caller's app is
a RemoteA2aAgent whose remote is the other server's ``/a2a/helper``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import user_text

pytestmark = pytest.mark.timeout(180)

AGENTS = Path(__file__).resolve().parent / "agents"
CALLER = "/apps/caller/users/u/sessions"


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    root = tmp_path_factory.mktemp("two")
    with api_server_process(AGENTS, root, "--a2a", "--session-service-uri", "memory://") as helper:
        env = {"A2A_HELPER_URL": f"{helper.url}/a2a/helper"}
        with api_server_process(
            AGENTS, root, "--session-service-uri", "memory://", env=env
        ) as caller:
            yield helper, caller


def _run(caller: ServerProcess, sid: str, text: str) -> list[dict[str, Any]]:
    body = {"app_name": "caller", "user_id": "u", "session_id": sid, "new_message": user_text(text)}
    with httpx.Client(base_url=caller.url, timeout=60) as http:
        answer = http.post("/run", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_turn_crosses_to_the_other_server_and_the_conversation_continues_there(
    servers: tuple[ServerProcess, ServerProcess],
):
    helper, caller = servers
    with httpx.Client(base_url=caller.url) as http:
        assert http.post(CALLER, json={"session_id": "s1"}).status_code == 200

    first = _run(caller, "s1", "hello")
    second = _run(caller, "s1", "again")

    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in first] == [
        ("remote_helper", "echo: hello")
    ]
    context = first[-1]["customMetadata"]["a2a:context_id"]
    assert second[-1]["customMetadata"]["a2a:context_id"] == context
    with httpx.Client(base_url=helper.url) as http:
        remote = http.get(f"/apps/helper/users/A2A_USER_{context}/sessions/{context}").json()
    said = [e["content"]["parts"][0]["text"] for e in remote["events"]]
    assert said == ["hello", "echo: hello", "again", "echo: again"]


def test_cancelling_the_callers_invocation_stops_the_tool_on_the_other_server(
    servers: tuple[ServerProcess, ServerProcess],
):
    helper, caller = servers
    with httpx.Client(base_url=caller.url, timeout=30) as http:
        assert http.post(CALLER, json={"session_id": "s2"}).status_code == 200
        started = http.post(f"{CALLER}/s2/invocations", json={"new_message": user_text("tool")})
        assert started.status_code == 202, started.text
        invocation = started.json()["invocation_id"]
        helper.wait_for("A2A-TEST tool started")
        before = helper.output().count("A2A-TEST tool stopped")

        cancel = http.post(f"{CALLER}/s2/invocations/{invocation}:cancel")

        assert cancel.status_code in (200, 202)
        # Within a second of the caller's cancel, the remote tool has been cancelled too.
        helper.wait_for("A2A-TEST tool stopped", timeout=1.0)
        assert helper.output().count("A2A-TEST tool stopped") == before + 1
        events = http.get(f"{CALLER}/s2/invocations/{invocation}/events").text
    assert "CANCELLED" in events
