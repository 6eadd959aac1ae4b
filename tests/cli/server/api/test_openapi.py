"""``/openapi.json`` and ``/docs`` describe every route: its parameters, body and answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route, WebSocketRoute

from adk_rx import InMemorySessionService
from adk_rx.cli.server import Limits, create_app
from adk_rx.cli.server.api.openapi import spec
from adk_rx.cli.server.api.openapi_operations import OPERATIONS
from tests.cli.adk_client import agents_folder, client_for

SESSION = "/apps/{app}/users/{user}/sessions/{sid}"
INVOCATIONS = SESSION + "/invocations"


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    return agents_folder("openapi")


@pytest.fixture(scope="module")
def document(agents: tuple[Path, str]) -> dict[str, Any]:
    """The document of a server with a limit of 7 parts per message."""
    import asyncio

    async def fetch() -> dict[str, Any]:
        async with client_for(agents[0], limits=Limits(max_parts=7)) as http:
            return (await http.get("/openapi.json")).json()

    return asyncio.run(fetch())


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    ]


def _mounted(app: Any) -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route)
        for method in (route.methods or ())
        if method != "HEAD"
    }


def test_every_route_the_server_mounts_is_in_the_document(
    agents: tuple[Path, str], document: dict[str, Any]
):
    app = create_app(agents[0], session_service=InMemorySessionService(), web=True)
    mounted = _mounted(app)
    described = {(method, path) for method, path, _ in operations(document)}

    assert mounted == described
    assert mounted <= set(OPERATIONS)  # each is described on purpose, not from a docstring
    sockets = {route.path for route in app.routes if isinstance(route, WebSocketRoute)}
    assert sockets == set(document["x-websockets"]) == {"/run_live"}
    ids = [operation["operationId"] for _, _, operation in operations(document)]
    assert len(ids) == len(set(ids))


def test_google_adks_dev_ui_routes_are_described_too(agents: tuple[Path, str]):
    pytest.importorskip("google.adk", reason="google-adk is not installed (the compat extra)")
    app = create_app(agents[0], session_service=InMemorySessionService(), web=True, ui="google-adk")
    document = spec(list(app.routes))

    assert _mounted(app) <= set(OPERATIONS)
    redirect = document["paths"]["/dev-ui"]["get"]
    assert set(redirect["responses"]["307"]) == {"description", "headers"}
    assert redirect["security"] == [] and "401" not in redirect["responses"]


def test_every_operation_names_its_parameters_and_its_answers(document: dict[str, Any]):
    for method, path, operation in operations(document):
        where = (method, path)
        in_path = {p["name"] for p in operation["parameters"] if p["in"] == "path"}
        assert in_path == set(re.findall(r"{(\w+)}", path)), where
        answers = operation["responses"]
        assert any(code.startswith("2") for code in answers), where
        with_body = [answer for code, answer in answers.items() if code != "307"]
        assert all("content" in answer for answer in with_body), where
        if path not in ("/health", "/", "/docs", "/openapi.json"):
            assert "401" in answers, where  # the token check
        if in_path:
            assert {"400", "404"} <= set(answers), where
        if "requestBody" in operation:
            assert {"400", "408", "413"} <= set(answers), where


def test_bodies_and_answers_are_the_models_schemas_with_the_servers_limits(
    document: dict[str, Any],
):
    schemas = document["components"]["schemas"]
    run = document["paths"]["/run"]["post"]
    assert run["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RunRequest"
    }
    assert {"new_message", "app_name", "user_id", "session_id"} <= set(
        schemas["RunRequest"]["required"]
    )
    start = document["paths"][INVOCATIONS]["post"]
    assert schemas["InvocationRequest"]["required"] == ["new_message"]
    assert set(start["responses"]) >= {"202", "409"} and "200" not in start["responses"]
    message = schemas["MessageContent"]["properties"]["parts"]
    assert (message["minItems"], message["maxItems"]) == (1, 7)
    assert schemas["MessagePart"]["properties"]["functionCall"]["type"] == "null"
    events = run["responses"]["200"]["content"]["application/json"]["schema"]["items"]
    assert "content" in schemas[events["$ref"].rsplit("/", 1)[1]]["properties"]
    patch = document["paths"][SESSION]["patch"]["requestBody"]["content"]["application/json"]
    assert patch["schema"]["$ref"].endswith("/UpdateSessionRequest")
    sse = document["paths"][INVOCATIONS + "/{iid}/events"]["get"]
    assert set(sse["responses"]["200"]["content"]) == {"text/event-stream"}
    stream = sse["responses"]["200"]["content"]["text/event-stream"]["schema"]["anyOf"]
    names = [event["properties"]["event"]["const"] for event in stream]
    assert names == ["message", "end", "gap"]  # each event's data: JSON of its own schema
    assert stream[1]["properties"]["data"]["contentSchema"]["$ref"].endswith("/StreamEnd")
    assert [p["name"] for p in sse["parameters"] if p["in"] == "query"] == ["after"]
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(document)))
    assert refs and refs <= set(schemas)


def test_routes_that_need_no_token_say_so(document: dict[str, Any]):
    public = {
        path for _, path, operation in operations(document) if operation.get("security") == []
    }
    assert public == {"/", "/health", "/docs", "/openapi.json"}
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


@pytest.mark.asyncio
async def test_docs_is_a_self_contained_page_served_without_a_token(agents: tuple[Path, str]):
    async with client_for(agents[0], tokens={"t": "u"}) as http:
        page = await http.get("/docs")
        document = await http.get("/openapi.json")
        api = await http.get("/list-apps")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/invocations/{iid}/events" in page.text and "<script" not in page.text
    assert "/run_live" in page.text
    assert document.status_code == 200 and api.status_code == 401


def _accepts(check: Any, value: str) -> bool:
    try:
        check(value)
    except Exception:
        return False
    return True


def test_ids_and_bytes_are_described_as_the_checks_take_them(document: dict[str, Any]):
    """The fuzzer found schema-valid values each of these refused (and so answered 400)."""
    from google.genai import types

    from adk_rx.cli.server.edge.validation import check_artifact_name, check_id
    from adk_rx.evaluation.eval_store import check_eval_id

    schemas = document["components"]["schemas"]
    path = document["paths"][SESSION + "/artifacts/{name}"]["get"]["parameters"]
    name = next(p["schema"] for p in path if p["name"] == "name")["pattern"]
    session = next(p["schema"] for p in path if p["name"] == "sid")["pattern"]
    evalset = schemas["AddSessionBody"]["properties"]["evalId"]["pattern"]
    signature = schemas["Part"]["properties"]["thoughtSignature"]["anyOf"][0]["pattern"]
    cases = {
        (name, check_artifact_name): ["a", ".a", "a.", "a..b", "..", ".", "a/b", "a\\b", "a\x01"],
        (session, lambda v: check_id(v, "id")): ["s1", "..", "a b", "a\nb", "\x7f"],
        (evalset, lambda v: check_eval_id(v, "id")): ["a", "a.b", "a..b", ".a", "a b", "_"],
        (
            signature,
            lambda v: types.Part.model_validate({"thought_signature": v}),
        ): ["", "YQ", "YQ==", "YR", "a+-b", "a", "a_-b", "ab=c", "YWJj"],
    }
    for (pattern, check), values in cases.items():
        for value in values:
            assert bool(re.search(pattern, value)) == _accepts(check, value), (pattern, value)


def test_seed_events_and_optional_bodies_are_described_as_the_routes_take_them(
    document: dict[str, Any],
):
    schemas = document["components"]["schemas"]
    seed = schemas["SeedEvent"]["properties"]
    assert seed["partial"]["anyOf"][0] == {"const": False, "type": "boolean"}
    assert seed["longRunningToolIds"]["anyOf"][0]["maxItems"] == 0
    create = document["paths"]["/apps/{app}/users/{user}/sessions"]["post"]["requestBody"]
    assert not create["required"]  # no body, or a JSON null, reads as an empty one
    assert {"type": "null"} in create["content"]["application/json"]["schema"]["anyOf"]
    assert "app_name" not in schemas["InvocationRequest"]["properties"]  # the path's
