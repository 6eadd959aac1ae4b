"""google-adk 2.13 as the oracle: the same OAuth2 tool against the same local server, run on
both runtimes. The ``adk_request_credential`` call has one shape, an answer written for one is
taken by the other, both exchange the code once, and both file the credential under one key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastapi.openapi import models as fastapi_models
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.auth.auth_credential import AuthCredential as AdkCredential
from google.adk.auth.auth_tool import AuthConfig as AdkAuthConfig
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.adk.tools import FunctionTool as AdkFunctionTool
from google.adk.tools.tool_context import ToolContext as AdkToolContext
from google.genai import types

from adk_rx import LlmAgent
from adk_rx.auth import AuthConfig
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from tests.auth.support import (
    REDIRECT,
    answer,
    credential_request,
    oauth_config,
    sign_in,
    whoami_tool,
)
from tests.tool_harness import Harness, call, calls

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalOAuthServer]:
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # google-adk's requests client
    with serve() as running:
        yield running


class _AdkScripted(AdkBaseLlm):
    script: list[Any] = []
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        item = self.script[self.calls]
        self.calls += 1
        yield AdkLlmResponse(content=item)


def _adk_config(server: LocalOAuthServer) -> AdkAuthConfig:
    scheme = fastapi_models.OAuth2(
        flows=fastapi_models.OAuthFlows(
            authorizationCode=fastapi_models.OAuthFlowAuthorizationCode(
                authorizationUrl=server.url + "/authorize",
                tokenUrl=server.url + "/token",
                scopes={"notes": "read and write notes"},
            )
        )
    )
    raw = AdkCredential.model_validate(
        {
            "authType": "oauth2",
            "oauth2": {
                "clientId": server.client_id,
                "clientSecret": server.client_secret,
                "redirectUri": REDIRECT,
            },
        }
    )
    return AdkAuthConfig(auth_scheme=scheme, raw_auth_credential=raw)


def _adk_turns(server: LocalOAuthServer) -> tuple[list[Any], list[Any]]:
    config = _adk_config(server)

    def whoami(tool_context: AdkToolContext) -> dict[str, Any]:
        """Tells who is signed in."""
        credential = tool_context.get_auth_response(config)
        if credential is None or credential.oauth2 is None:
            tool_context.request_credential(config)
            return {"status": "waiting for the user to sign in"}
        got = httpx.get(
            server.url + "/api/me",
            headers={"Authorization": f"Bearer {credential.oauth2.access_token}"},
            timeout=5,
        )
        return got.json()

    model_call = types.Content(
        role="model",
        parts=[types.Part(function_call=types.FunctionCall(name="whoami", args={}, id="c1"))],
    )
    done = types.Content(role="model", parts=[types.Part(text="You are ada.")])
    llm = _AdkScripted(model="m", script=[model_call, done])
    agent = AdkLlmAgent(name="root", model=llm, tools=[AdkFunctionTool(whoami)])

    async def run() -> tuple[list[Any], list[Any]]:
        runner = AdkInMemoryRunner(agent=agent, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u1")
        first = [
            e
            async for e in runner.run_async(
                user_id="u1",
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="who am I?")]),
            )
        ]
        request_id, args = credential_request(first)
        second = [
            e
            async for e in runner.run_async(
                user_id="u1",
                session_id=session.id,
                new_message=answer(request_id, args, sign_in(args)),
            )
        ]
        return first, second

    return asyncio.run(run())


def _shape(value: Any) -> Any:
    """The keys of nested dicts (values left out: ids, states and URIs differ per run)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    return type(value).__name__


def _uri_params(args: dict[str, Any]) -> dict[str, list[str]]:
    uri = args["authConfig"]["exchangedAuthCredential"]["oauth2"]["authUri"]
    params = parse_qs(urlsplit(uri).query)
    params.pop("state")
    return params


def _summary(events: list[Any]) -> list[tuple[str, ...]]:
    out = []
    for event in events:
        parts = event.content.parts if event.content else []
        out.append(
            tuple(
                (p.function_call and f"call {p.function_call.name}")
                or (p.function_response and f"answer {p.function_response.response}")
                or p.text
                or "?"
                for p in parts or []
            )
        )
    return out


def test_both_runtimes_pause_and_resume_a_sign_in_the_same_way(server: LocalOAuthServer) -> None:
    adk_first, adk_second = _adk_turns(server)
    adk_exchanges = server.exchanges

    llm = ScriptedLlm([calls(call("whoami", {}, "c1")), "You are ada."])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[whoami_tool(server)]))
    rx_first = harness.turn("who am I?")
    request_id, rx_args = credential_request(rx_first)
    rx_second = harness.turn(answer(request_id, rx_args, sign_in(rx_args)))

    _, adk_args = credential_request(adk_first)
    assert _shape(rx_args) == _shape(adk_args)
    assert _uri_params(rx_args) == _uri_params(adk_args)
    assert rx_args["authConfig"]["credentialKey"] == adk_args["authConfig"]["credentialKey"]
    assert _summary(rx_first) == _summary(adk_first)
    assert _summary(rx_second) == _summary(adk_second)
    assert adk_exchanges == 1 and server.exchanges == 2  # once each


@pytest.mark.parametrize(
    "scheme",
    [
        {"type": "apiKey", "in": "header", "name": "X-Key"},
        {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://t/token"}}},
    ],
)
def test_the_credential_key_is_google_adks(scheme: dict[str, Any]) -> None:
    raw = {"authType": "oauth2", "oauth2": {"clientId": "c", "clientSecret": "s", "state": "x"}}
    adk_scheme: Any = {
        "apiKey": fastapi_models.APIKey,
        "http": fastapi_models.HTTPBearer,
        "oauth2": fastapi_models.OAuth2,
    }[scheme["type"]].model_validate(scheme)
    adk = AdkAuthConfig(
        auth_scheme=adk_scheme, raw_auth_credential=AdkCredential.model_validate(raw)
    )

    assert (
        AuthConfig.model_validate({"authScheme": scheme, "rawAuthCredential": raw}).credential_key
        == adk.credential_key
    )
    assert (
        AuthConfig(auth_scheme=adk_scheme, raw_auth_credential=raw).credential_key
        == adk.credential_key
    )  # type: ignore[arg-type]


def test_google_adks_request_args_parse_as_adk_rx_tool_arguments(server: LocalOAuthServer) -> None:
    adk_first, _ = _adk_turns(server)
    _, args = credential_request(adk_first)

    from adk_rx.auth import AuthToolArguments

    parsed = AuthToolArguments.model_validate(args)
    assert parsed.function_call_id == "c1"
    assert parsed.auth_config.credential_key == oauth_config(server).credential_key
