"""``/openapi.json`` and ``/docs`` describe every route, the invocation routes included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.routing import Route

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.adk_client import agents_folder, client_for


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("openapi")


@pytest.mark.asyncio
async def test_every_route_is_described_with_its_methods(agents: tuple[Path, str]):
    app = create_app(agents[0], session_service=InMemorySessionService())
    async with client_for(agents[0]) as http:
        document = (await http.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    for route in app.routes:
        if isinstance(route, Route):
            for method in route.methods or ():
                if method != "HEAD":
                    assert method.lower() in document["paths"][route.path], (method, route.path)
    invocations = "/apps/{app}/users/{user}/sessions/{sid}/invocations"
    assert set(document["paths"][invocations]) == {"get", "post"}
    assert "post" in document["paths"][invocations + "/{iid}:cancel"]
    events = document["paths"][invocations + "/{iid}/events"]["get"]
    assert "after" in events["summary"] and events["tags"] == ["invocations"]
    ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))


@pytest.mark.asyncio
async def test_request_bodies_are_json_schemas_whose_refs_resolve(agents: tuple[Path, str]):
    async with client_for(agents[0]) as http:
        document = (await http.get("/openapi.json")).json()
    run = document["paths"]["/run_sse"]["post"]["requestBody"]["content"]["application/json"]
    assert run["schema"] == {"$ref": "#/components/schemas/RunRequest"}
    schemas = document["components"]["schemas"]
    assert "new_message" in schemas["RunRequest"]["required"]
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(document)))
    assert refs and refs <= set(schemas)
    patch = document["paths"]["/apps/{app}/users/{user}/sessions/{sid}"]["patch"]
    assert patch["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "UpdateSessionRequest"
    )


@pytest.mark.asyncio
async def test_docs_is_a_self_contained_page_served_without_a_token(agents: tuple[Path, str]):
    async with client_for(agents[0], tokens={"t": "u"}) as http:
        page = await http.get("/docs")
        document = await http.get("/openapi.json")
        api = await http.get("/list-apps")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/invocations/{iid}/events" in page.text and "<script" not in page.text
    assert document.status_code == 200 and api.status_code == 401
