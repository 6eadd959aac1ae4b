"""``allow_origins``: CORS for listed origins only, never weakening the Host check."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_rx.cli.server.edge.cors import AllowedOrigins
from tests.cli.adk_client import agents_folder, client_for

UI = "http://localhost:4200"


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("cors")


@pytest.mark.asyncio
async def test_off_by_default_another_origin_is_refused_without_cors_headers(
    agents: tuple[Path, str],
):
    async with client_for(agents[0]) as http:
        response = await http.get("/list-apps", headers={"Origin": UI})
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


@pytest.mark.asyncio
async def test_a_listed_origin_gets_cors_headers_and_preflights_need_no_token(
    agents: tuple[Path, str],
):
    options = {"allow_origins": [UI], "tokens": {"t": "u1"}}
    async with client_for(agents[0], **options) as http:
        preflight = await http.options(
            "/run_sse",
            headers={
                "Origin": UI,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        listed = await http.get("/list-apps", headers={"Origin": UI, "Authorization": "Bearer t"})
        no_token = await http.get("/list-apps", headers={"Origin": UI})
        other = await http.get(
            "/list-apps", headers={"Origin": "http://evil.test", "Authorization": "Bearer t"}
        )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == UI
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == UI
    assert no_token.status_code == 401
    assert other.status_code == 403


@pytest.mark.asyncio
async def test_the_host_check_holds_for_an_allowed_origin(agents: tuple[Path, str]):
    async with client_for(agents[0], allow_origins=["*"]) as http:
        foreign = await http.get("/list-apps", headers={"Origin": UI, "Host": "evil.test"})
        local = await http.get("/list-apps", headers={"Origin": "http://anything.test"})
    assert foreign.status_code == 403
    assert local.status_code == 200


def test_origins_parse_literals_wildcards_and_patterns():
    origins = AllowedOrigins.parse([UI + "/", "regex:https://.*\\.example\\.com", " "])
    assert origins.allows(UI)
    assert origins.allows("https://ui.example.com")
    assert not origins.allows("https://ui.example.com.evil.test")
    assert not origins.allows("http://localhost:4201")
    assert AllowedOrigins.parse(["*"]).allows("http://x")
