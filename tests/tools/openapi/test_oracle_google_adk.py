"""google-adk 2.13 as the oracle for parsing: the same OpenAPI documents give the same tools
(names, descriptions, argument schemas) in both runtimes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml
from google.adk.tools.openapi_tool import OpenAPIToolset as AdkOpenAPIToolset

from adk_rx.testing.oauth_server import LocalOAuthServer
from adk_rx.tools.openapi import OpenAPIToolset
from tests.tools.openapi.support import echo_spec


def _documents() -> dict[str, dict[str, Any]]:
    notes = LocalOAuthServer(url="http://127.0.0.1:1").openapi_spec()
    return {
        "echo": echo_spec("http://127.0.0.1:1"),
        "notes": notes,
        "api key": echo_spec(
            "http://127.0.0.1:1", {"type": "apiKey", "in": "header", "name": "X-Key"}
        ),
    }


def _adk_tools(document: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    toolset = AdkOpenAPIToolset(spec_dict=document)
    tools = asyncio.run(toolset.get_tools())
    return {
        t.name: (t.description, t._operation_parser.get_json_schema())  # pyright: ignore
        for t in tools
    }


def _rx_tools(toolset: OpenAPIToolset) -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for tool in toolset.get_tools():
        declaration = tool.declaration()
        assert declaration is not None
        out[tool.name] = (tool.description, declaration.parameters_json_schema)
    return out


@pytest.mark.parametrize("name", ["echo", "notes", "api key"])
def test_a_document_gives_google_adks_tools(name: str) -> None:
    document = _documents()[name]

    rx_tools = _rx_tools(OpenAPIToolset(spec_dict=document))

    assert rx_tools == _adk_tools(document)


def test_yaml_and_json_give_the_same_tools() -> None:
    document = _documents()["echo"]

    from_json = _rx_tools(OpenAPIToolset(spec_str=json.dumps(document), spec_str_type="json"))
    from_yaml = _rx_tools(OpenAPIToolset(spec_str=yaml.safe_dump(document), spec_str_type="yaml"))

    assert from_json == from_yaml == _rx_tools(OpenAPIToolset(spec_dict=document))
