"""google-adk's service routes: list-apps (detailed), app-info, version, health, telemetry."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from tests.cli.adk_client import adk, agents_folder, client_for

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("service")


async def test_list_apps_detailed_answers_app_infos(agents: tuple[Path, str]):
    root, app = agents
    async with client_for(root) as http:
        assert (await http.get("/list-apps")).json() == [app]
        body = (await http.get("/list-apps", params={"detailed": "true"})).json()
    assert body == {
        "apps": [
            {
                "name": app,
                "rootAgentName": "assistant",
                "description": "",
                "language": "python",
                "isComputerUse": False,
            }
        ]
    }
    api = adk("cli.api_server")
    assert api.ListAppsResponse.model_validate(body).apps[0].root_agent_name == "assistant"


async def test_app_info_lists_agents_with_their_tool_declarations(agents: tuple[Path, str]):
    root, app = agents
    async with client_for(root) as http:
        response = await http.get(f"/apps/{app}/app-info")
        missing = await http.get("/apps/nope/app-info")
    assert response.status_code == 200 and missing.status_code == 404
    body = response.json()
    agent = body["agents"]["assistant"]
    assert agent["instruction"] == "You answer questions." and agent["sub_agents"] == []
    names = [t["functionDeclarations"][0]["name"] for t in agent["tools"]]
    assert names == ["get_weather", "save_note"]
    info = adk("cli.api_server").AppInfo.model_validate(body)
    assert info.agents["assistant"].tools[0].function_declarations[0].name == "get_weather"


async def test_version_health_and_telemetry(agents: tuple[Path, str]):
    async with client_for(agents[0]) as http:
        version = (await http.get("/version")).json()
        health = (await http.get("/health")).json()
        telemetry = (await http.get("/config/telemetry")).json()
        no_header = await http.post("/config/telemetry", json={"telemetry": True})
        opted = await http.post(
            "/config/telemetry",
            json={"telemetry": True},
            headers={"X-Adk-Telemetry-Request": "true"},
        )
    assert version["language"] == "python"
    assert version["language_version"] == platform.python_version() and version["version"]
    assert health == {"status": "ok"}
    assert telemetry == {"telemetry": False}
    assert no_header.status_code == 400
    assert opted.status_code == 200 and opted.json() == {"telemetry": False}
