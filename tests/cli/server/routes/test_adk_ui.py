"""``--ui google-adk``: google-adk's bundle served same-origin with its runtime config."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_rx.cli.main import build_parser
from adk_rx.cli.server import create_app
from adk_rx.errors import ConfigurationError
from tests.cli.adk_client import adk, agents_folder, client_for


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("ui")


@pytest.mark.asyncio
async def test_the_bundle_is_served_at_dev_ui_with_its_runtime_config(agents: tuple[Path, str]):
    adk("cli")  # skips without google-adk
    async with client_for(agents[0], web=True, ui="google-adk") as http:
        root = await http.get("/")
        page = await http.get("/dev-ui/")
        config = await http.get("/dev-ui/assets/config/runtime-config.json")
        script = await http.get("/dev-ui/adk_favicon.svg")
        apps = await http.get("/list-apps")
    assert root.status_code == 307 and root.headers["location"] == "/dev-ui/"
    assert page.status_code == 200 and "<app-root>" in page.text
    assert config.json() == {"backendUrl": "", "telemetry": False}
    assert config.headers["cache-control"] == "no-store"
    assert script.status_code == 200
    assert apps.json() == [agents[1]]


@pytest.mark.asyncio
async def test_our_page_stays_the_default_and_the_bundle_needs_web(agents: tuple[Path, str]):
    async with client_for(agents[0], web=True) as http:
        page = await http.get("/")
        ui = await http.get("/dev-ui/")
    assert page.status_code == 200 and "<app-root>" not in page.text
    assert ui.status_code == 404
    async with client_for(agents[0], ui="google-adk") as http:  # api-server: no page
        assert (await http.get("/dev-ui/")).status_code == 404


@pytest.mark.asyncio
async def test_the_bundle_files_need_no_token_but_the_api_does(agents: tuple[Path, str]):
    adk("cli")
    async with client_for(agents[0], web=True, ui="google-adk", tokens={"t": "u"}) as http:
        assert (await http.get("/dev-ui/")).status_code == 200
        assert (await http.get("/dev-ui/assets/config/runtime-config.json")).status_code == 200
        assert (await http.get("/list-apps")).status_code == 401


def test_an_unknown_ui_is_a_configuration_error(agents: tuple[Path, str]):
    with pytest.raises(ConfigurationError, match="ui must be one of"):
        create_app(agents[0], web=True, ui="angular")


def test_the_web_command_takes_ui_and_both_commands_take_allow_origins():
    web = build_parser().parse_args(["web", "agents", "--ui", "google-adk"])
    assert web.ui == "google-adk" and web.allow_origins is None
    api = build_parser().parse_args(
        ["api-server", "agents", "--allow-origins", "http://a:1", "regex:https://.*\\.b"]
    )
    assert api.allow_origins == ["http://a:1", "regex:https://.*\\.b"]
    assert build_parser().parse_args(["web", "agents"]).ui == "adk-rx"


def test_without_google_adk_the_error_says_what_to_install(
    agents: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match=r"adk_rx\[compat\]"):
        create_app(agents[0], web=True, ui="google-adk")
