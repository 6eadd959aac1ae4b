"""A real ``adk-rx api-server`` streams a streaming AgentTool's child events over /run_sse,
between the tool call and its response, without storing them in the session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from tests.cli.server_process import api_server_process
from tests.cli.server_support import parse_frames, unique_app, user_text

pytestmark = pytest.mark.timeout(120)

AGENT = Path(__file__).with_name("stream_events_agent.py")


def test_run_sse_streams_the_child_events_of_a_streaming_agent_tool(tmp_path: Path) -> None:
    app = unique_app("stream_events")
    (tmp_path / "agents" / app).mkdir(parents=True)
    shutil.copy(AGENT, tmp_path / "agents" / app / "agent.py")
    with (
        api_server_process(tmp_path / "agents", tmp_path) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        created = http.post(f"/apps/{app}/users/u1/sessions", json={"sessionId": "s1"})
        assert created.status_code == 200, created.text
        body = {
            "appName": app,
            "userId": "u1",
            "sessionId": "s1",
            "newMessage": user_text("weather in Paris?"),
        }
        response = http.post("/run_sse", json=body)
        assert response.status_code == 200, response.text
        events = [json.loads(f.data) for f in parse_frames(response.text) if f.data]
        stored = http.get(f"/apps/{app}/users/u1/sessions/s1").json()["events"]

    streamed = [e for e in events if "agent_tool" in (e.get("customMetadata") or {})]
    assert [e["author"] for e in events] == [
        "outer",
        "helper",
        "helper",
        "helper",
        "outer",
        "outer",
    ]
    assert [e["author"] for e in streamed] == ["helper"] * 3
    assert all(e["partial"] for e in streamed)
    assert {e["customMetadata"]["agent_tool"]["call_id"] for e in streamed} == {"c-1"}
    assert streamed[-1]["content"]["parts"][0]["text"] == "Paris: 21"
    assert {e["invocationId"] for e in events} == {events[0]["invocationId"]}
    assert [e["author"] for e in stored] == ["user", "outer", "outer", "outer"]
