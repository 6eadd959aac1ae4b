"""Shared pieces of the auth tests: the OAuth2 config of the local server, a tool that calls
its API, and the client's part of a sign-in (follow the auth URI, answer with the redirect)."""

from __future__ import annotations

from typing import Any

import httpx

from adk_rx import Event, FunctionTool, ToolContext
from adk_rx.auth import (
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlow,
    OAuthFlows,
)
from adk_rx.events import CREDENTIAL_FUNCTION
from adk_rx.testing.oauth_server import LocalOAuthServer
from tests.tool_harness import user_response

REDIRECT = "http://127.0.0.1/callback"


def oauth_config(server: LocalOAuthServer) -> AuthConfig:
    """The authorization-code config of the local server's registered client."""
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlow(
                    authorization_url=server.url + "/authorize",
                    token_url=server.url + "/token",
                    scopes={"notes": "read and write notes"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(
                client_id=server.client_id,
                client_secret=server.client_secret,
                redirect_uri=REDIRECT,
            ),
        ),
    )


def whoami_tool(server: LocalOAuthServer) -> FunctionTool:
    """A tool that asks for the user's sign-in, then calls ``/api/me`` with the token."""
    config = oauth_config(server)

    def whoami(tool_context: ToolContext) -> dict[str, Any]:
        """Tells who is signed in."""
        credential = tool_context.get_auth_response(config)
        if credential is None or credential.oauth2 is None:
            tool_context.request_credential(config)
            return {"status": "waiting for the user to sign in"}
        answer = httpx.get(
            server.url + "/api/me",
            headers={"Authorization": f"Bearer {credential.oauth2.access_token}"},
            timeout=5,
        )
        return answer.json()

    return FunctionTool(whoami)


def credential_request(events: list[Event]) -> tuple[str, dict[str, Any]]:
    """The id and args of the one ``adk_request_credential`` call among ``events``."""
    found = [
        (c.id, dict(c.args or {}))
        for e in events
        for c in e.get_function_calls()
        if c.name == CREDENTIAL_FUNCTION
    ]
    assert len(found) == 1, found
    request_id, args = found[0]
    assert request_id
    return request_id, args


def sign_in(args: dict[str, Any], *, code: str | None = None, state: str | None = None) -> str:
    """What a browser does: open the auth URI, land on the redirect URL (returned).

    ``code`` / ``state`` replace the server's, to play a wrong code or a forged state.
    """
    auth_uri = args["authConfig"]["exchangedAuthCredential"]["oauth2"]["authUri"]
    landed = httpx.get(auth_uri, follow_redirects=False, timeout=5)
    assert landed.status_code == 302, landed.text
    url = httpx.URL(landed.headers["location"])
    params = dict(url.params)
    if code is not None:
        params["code"] = code
    if state is not None:
        params["state"] = state
    return str(url.copy_with(params=params))


def answer(request_id: str, args: dict[str, Any], redirect_url: str) -> Any:
    """The user's message answering the request: its auth config with the redirect URL."""
    config = dict(args["authConfig"])
    exchanged = dict(config["exchangedAuthCredential"])
    exchanged["oauth2"] = {**exchanged["oauth2"], "authResponseUri": redirect_url}
    config["exchangedAuthCredential"] = exchanged
    return user_response(request_id, CREDENTIAL_FUNCTION, config)
