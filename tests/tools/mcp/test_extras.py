"""McpToolset extras against real MCP servers (the mcp package's server, as subprocesses on
SSE and streamable HTTP): headers per call, auth, confirmation, resources."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import LlmAgent, ReadonlyContext
from adk_rx.auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HTTPBearer,
    HttpCredentials,
    InMemoryCredentialService,
    OAuth2,
    OAuth2Auth,
    OAuthFlow,
    OAuthFlows,
)
from adk_rx.events import CONFIRMATION_FUNCTION
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import serve
from adk_rx.tools.mcp import (
    McpToolset,
    SseConnectionParams,
    StreamableHTTPConnectionParams,
    call_options,
)
from tests.auth.support import REDIRECT, answer, credential_request, sign_in
from tests.tool_harness import Harness, call, calls, user_response

from .conftest import _free_port, _wait_for_port

SERVER = str(Path(__file__).with_name("extras_server.py"))
pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module", params=["sse", "streamable-http"])
def params_of(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Makes connection params for the extras server on one transport (one process each)."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, request.param, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        if request.param == "sse":
            yield lambda **kw: SseConnectionParams(url=f"http://127.0.0.1:{port}/sse", **kw)
        else:
            yield lambda **kw: StreamableHTTPConnectionParams(
                url=f"http://127.0.0.1:{port}/mcp", **kw
            )
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def toolsets() -> Iterator[list[McpToolset]]:
    made: list[McpToolset] = []
    yield made
    for toolset in made:
        toolset.close()


def _responses(events: list[Any]) -> list[Any]:
    return [r.response for e in events for r in e.get_function_responses()]


def test_headers_of_the_provider_go_with_each_call_one_session_per_set(
    params_of: Any, toolsets: list[McpToolset]
) -> None:
    def tenant(context: ReadonlyContext) -> dict[str, str]:
        return {"X-Tenant": str(context.state.get("tenant", "none"))}

    toolset = McpToolset(connection_params=params_of(timeout=10), header_provider=tenant)
    toolsets.append(toolset)
    llm = ScriptedLlm(
        [calls(call("whoami", {}, "c1")), "one", calls(call("whoami", {}, "c2")), "two"]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[toolset]))

    first = harness.turn("hi", state_delta={"tenant": "acme"})
    second = harness.turn("hi", state_delta={"tenant": "globex"})

    assert _responses(first)[0]["tenant"] == "acme"
    assert _responses(second)[0]["tenant"] == "globex"
    assert len(toolset.options._pool) == 2  # pyright: ignore[reportPrivateUsage]


def test_a_configured_bearer_token_authenticates_listing_and_calls(
    params_of: Any, toolsets: list[McpToolset]
) -> None:
    toolset = McpToolset(
        connection_params=params_of(timeout=10),
        auth_scheme=HTTPBearer(),
        auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token="tok-7")),
        ),
    )
    toolsets.append(toolset)
    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "done"])

    events = Harness(LlmAgent(name="root", model=llm, tools=[toolset])).turn("hi")

    assert _responses(events)[0]["authorization"] == "Bearer tok-7"


def test_a_users_sign_in_pauses_then_the_call_carries_their_token(
    params_of: Any, toolsets: list[McpToolset]
) -> None:
    with serve() as oauth:
        toolset = McpToolset(
            connection_params=params_of(timeout=10),
            auth_scheme=OAuth2(
                flows=OAuthFlows(
                    authorization_code=OAuthFlow(
                        authorization_url=oauth.url + "/authorize", token_url=oauth.url + "/token"
                    )
                )
            ),
            auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(
                    client_id=oauth.client_id,
                    client_secret=oauth.client_secret,
                    redirect_uri=REDIRECT,
                ),
            ),
        )
        toolsets.append(toolset)
        llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "done"])
        harness = Harness(
            LlmAgent(name="root", model=llm, tools=[toolset]),
            credential_service=InMemoryCredentialService(),
        )

        request_id, args = credential_request(harness.turn("hi"))
        second = harness.turn(answer(request_id, args, sign_in(args)))

        assert _responses(second)[0]["authorization"].startswith("Bearer at-")
        assert oauth.exchanges == 1


def _confirm(events: list[Any], confirmed: bool) -> Any:
    (request_id,) = [
        c.id for e in events for c in e.get_function_calls() if c.name == CONFIRMATION_FUNCTION
    ]
    return user_response(request_id or "", CONFIRMATION_FUNCTION, {"confirmed": confirmed})


def test_require_confirmation_waits_for_the_user_and_a_callable_decides_per_call(
    params_of: Any, toolsets: list[McpToolset]
) -> None:
    toolset = McpToolset(
        connection_params=params_of(timeout=10),
        require_confirmation=lambda args: args.get("item") == "prod",
    )
    toolsets.append(toolset)
    llm = ScriptedLlm(
        [
            calls(call("delete", {"item": "tmp"}, "c1")),
            "deleted tmp",
            calls(call("delete", {"item": "prod"}, "c2")),
            "asked",
            "deleted prod",
            calls(call("delete", {"item": "prod"}, "c3")),
            "asked again",
            "kept prod",
        ]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[toolset]))

    assert "deleted tmp" in _responses(harness.turn("tmp"))[0]["result"]
    asking = harness.turn("prod")
    assert [r.get("error", "")[:30] for r in _responses(asking)] == [
        "This tool call requires confir"
    ]
    confirmed = harness.turn(_confirm(asking, True))
    assert "deleted prod" in _responses(confirmed)[0]["result"]
    rejected = harness.turn(_confirm(harness.turn("prod again"), False))
    assert _responses(rejected)[0] == {"error": "This tool call is rejected."}


def test_load_mcp_resource_lists_resources_and_reads_text_and_binary(
    params_of: Any, toolsets: list[McpToolset]
) -> None:
    toolset = McpToolset(connection_params=params_of(timeout=10), use_mcp_resources=True)
    toolsets.append(toolset)
    llm = ScriptedLlm(
        [
            calls(call("load_mcp_resource", {"resource_names": ["welcome", "notes://logo"]})),
            "read",
            calls(call("load_mcp_resource", {"resource_names": "welcome"})),
            calls(call("load_mcp_resource", {"resource_names": ["x"] * 17})),
            calls(call("load_mcp_resource", {"resource_names": ["../etc/passwd"]})),
            "done",
        ]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[toolset]))

    loaded = _responses(harness.turn("read them"))[0]["resources"]

    assert "welcome" in llm.requests[0].system_instruction_text()
    assert loaded[0]["text"] == "Welcome to the notes server."
    assert loaded[1]["mime_type"] == "image/png" and loaded[1]["size"] == 14
    hostile = _responses(harness.turn("bad"))
    assert hostile[0] == {"error": "resource_names must be a list of strings"}
    assert hostile[1] == {"error": "at most 16 resources a call"}
    assert hostile[2] == {"resources": [{"name": "../etc/passwd", "error": "no such resource"}]}


def test_the_pool_of_sessions_is_bounded(
    params_of: Any, toolsets: list[McpToolset], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(call_options, "MAX_CONNECTIONS", 2)
    toolset = McpToolset(
        connection_params=params_of(timeout=10),
        header_provider=lambda ctx: {"X-Tenant": str(ctx.state.get("tenant"))},
    )
    toolsets.append(toolset)
    script: list[Any] = []
    for i in range(4):
        script += [calls(call("whoami", {}, f"c{i}")), f"turn {i}"]
    harness = Harness(LlmAgent(name="root", model=ScriptedLlm(script), tools=[toolset]))

    for i in range(4):
        assert _responses(harness.turn("hi", state_delta={"tenant": f"t{i}"}))[0]["tenant"] == (
            f"t{i}"
        )

    assert len(toolset.options._pool) == 2  # pyright: ignore[reportPrivateUsage]
