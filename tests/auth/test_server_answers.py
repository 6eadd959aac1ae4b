"""Answers to credential requests through the api-server (``/run``): scoped to the caller's
session, refused when they answer nothing open, bounded, and never stored or echoed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from adk_rx.auth.answers import MAX_ANSWER_CHARS
from adk_rx.testing.oauth_server import LocalOAuthServer, serve
from tests.auth.support import answer, sign_in
from tests.cli.adk_client import client_for, run_body
from tests.cli.server_support import unique_app

pytestmark = pytest.mark.asyncio

AGENT = """
from google.genai import types
from adk_rx import LlmAgent
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import LocalOAuthServer
from tests.auth.support import whoami_tool

server = LocalOAuthServer(url={url!r}, client_secret={secret!r})
whoami = types.FunctionCall(name="whoami", args={{}})
call = LlmResponse(content=model_content(types.Part(function_call=whoami)))
model = ScriptedLlm([call, "signed in", call, "again", call])
root_agent = LlmAgent(name="desk", model=model, tools=[whoami_tool(server)])
"""


@pytest.fixture
def oauth() -> Iterator[LocalOAuthServer]:
    with serve() as running:
        yield running


@pytest_asyncio.fixture
async def setup(
    oauth: LocalOAuthServer, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    app = unique_app("auth")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT.format(url=oauth.url, secret=oauth.client_secret))
    async with client_for(folder.parent) as http:
        for user in ("u1", "u2"):
            await http.post(f"/apps/{app}/users/{user}/sessions", json={"sessionId": "s1"})
        yield http, app


def _body(app: str, content: Any, user: str = "u1") -> dict[str, Any]:
    body = run_body(app, "", user=user)
    body["newMessage"] = content.model_dump(mode="json", by_alias=True, exclude_none=True)
    return body


async def _asked(http: httpx.AsyncClient, app: str) -> tuple[str, dict[str, Any]]:
    response = await http.post("/run", json=run_body(app, "who am I?"))
    assert response.status_code == 200, response.text
    calls = [
        (p["functionCall"]["id"], p["functionCall"]["args"])
        for e in response.json()
        for p in (e.get("content") or {}).get("parts") or []
        if p.get("functionCall", {}).get("name") == "adk_request_credential"
    ]
    assert len(calls) == 1
    return calls[0]


async def test_an_answer_through_the_server_is_exchanged_and_never_stored_or_echoed(
    setup: tuple[httpx.AsyncClient, str], oauth: LocalOAuthServer
) -> None:
    http, app = setup
    request_id, args = await _asked(http, app)
    redirect = sign_in(args)

    response = await http.post("/run", json=_body(app, answer(request_id, args, redirect)))

    assert response.status_code == 200, response.text
    assert '"user": "ada"' in json.dumps(response.json())
    stored = (await http.get(f"/apps/{app}/users/u1/sessions/s1")).text
    for secret in [*oauth.secrets_issued(), redirect]:
        assert secret not in stored and secret not in response.text
    assert "credential received" in stored
    assert oauth.exchanges == 1

    replayed = await http.post("/run", json=_body(app, answer(request_id, args, redirect)))
    assert replayed.status_code == 400  # the request is answered: no second exchange
    assert oauth.exchanges == 1


async def test_another_users_answer_and_an_answer_to_nothing_are_refused(
    setup: tuple[httpx.AsyncClient, str], oauth: LocalOAuthServer
) -> None:
    http, app = setup
    request_id, args = await _asked(http, app)
    redirect = sign_in(args)

    other_user = await http.post(
        "/run", json=_body(app, answer(request_id, args, redirect), user="u2")
    )
    made_up = await http.post("/run", json=_body(app, answer("made-up", args, redirect)))

    assert other_user.status_code == 400 and made_up.status_code == 400
    assert oauth.exchanges == 0


async def test_an_oversize_answer_is_dropped_and_the_tool_asks_again(
    setup: tuple[httpx.AsyncClient, str], oauth: LocalOAuthServer
) -> None:
    http, app = setup
    request_id, args = await _asked(http, app)
    huge = sign_in(args) + "&pad=" + "x" * MAX_ANSWER_CHARS

    response = await http.post("/run", json=_body(app, answer(request_id, args, huge)))

    assert response.status_code in (200, 413), response.text
    if response.status_code == 200:
        asked_again = [
            p
            for e in response.json()
            for p in (e.get("content") or {}).get("parts") or []
            if p.get("functionCall", {}).get("name") == "adk_request_credential"
        ]
        assert len(asked_again) == 1
    assert oauth.exchanges == 0


async def test_the_server_keeps_a_users_credential_for_their_next_sessions_only(
    setup: tuple[httpx.AsyncClient, str], oauth: LocalOAuthServer
) -> None:
    http, app = setup
    request_id, args = await _asked(http, app)
    await http.post("/run", json=_body(app, answer(request_id, args, sign_in(args))))
    await http.post(f"/apps/{app}/users/u1/sessions", json={"sessionId": "s2"})

    later = await http.post("/run", json=run_body(app, "again", sid="s2"))
    other = await http.post("/run", json=run_body(app, "me too", user="u2"))

    assert '"user": "ada"' in json.dumps(later.json())  # no second sign-in for u1
    assert "adk_request_credential" in other.text  # u2 signs in on their own
    assert oauth.exchanges == 1


async def test_credential_service_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.fernet import Fernet

    from adk_rx.auth import InMemoryCredentialService, SqlCredentialService
    from adk_rx.cli.server.stores import credential_service_from_uri
    from adk_rx.errors import ConfigurationError

    assert isinstance(credential_service_from_uri("memory://"), InMemoryCredentialService)
    monkeypatch.delenv("ADK_RX_CREDENTIAL_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="ADK_RX_CREDENTIAL_KEY"):
        credential_service_from_uri(f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("ADK_RX_CREDENTIAL_KEY", Fernet.generate_key().decode())
    sql = credential_service_from_uri(f"sqlite:///{tmp_path / 'c.db'}")
    assert isinstance(sql, SqlCredentialService)
    sql.close()
    with pytest.raises(ConfigurationError, match="credential-service-uri"):
        credential_service_from_uri("file:///tmp/x")
