"""Credentials: what a tool presents to an API (google-adk's ``AuthCredential`` shape).

JSON field names are camelCase (``authType``, ``accessToken``), as google-adk writes them, and
either spelling is accepted. Secret fields never show in ``repr`` (so not in a log line or an
error text either); :func:`without_secrets` is the copy that may travel to a client.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, alias_generators

__all__ = [
    "AuthCredential",
    "AuthCredentialTypes",
    "HttpAuth",
    "HttpCredentials",
    "OAuth2Auth",
    "without_secrets",
]

_Secret = Field(default=None, repr=False)


class _Model(BaseModel, hide_input_in_errors=True):
    """camelCase JSON, snake_case Python; unknown keys kept (google-adk's model config)."""

    model_config = ConfigDict(
        extra="allow", alias_generator=alias_generators.to_camel, populate_by_name=True
    )

    def __repr_args__(self):
        extra = self.__pydantic_extra__ or {}
        for key, value in super().__repr_args__():
            yield key, "<redacted>" if key in extra else value


class AuthCredentialTypes(StrEnum):
    """The kind of credential (the values are google-adk's and OpenAPI's)."""

    API_KEY = "apiKey"
    HTTP = "http"
    OAUTH2 = "oauth2"
    OPEN_ID_CONNECT = "openIdConnect"
    SERVICE_ACCOUNT = "serviceAccount"


class HttpCredentials(_Model):
    """A user name and password (basic) or a token (bearer)."""

    username: str | None = None
    password: Annotated[str | None, _Secret] = None
    token: Annotated[str | None, _Secret] = None


class HttpAuth(_Model):
    """HTTP authentication: the Authorization scheme (``basic``, ``bearer``) and its secret."""

    scheme: str
    credentials: HttpCredentials
    additional_headers: Annotated[dict[str, str] | None, _Secret] = None


class OAuth2Auth(_Model):
    """An OAuth2 client and, once authorized, its tokens.

    ``auth_uri`` and ``state`` are made by adk_rx when it asks the user to sign in; the user's
    answer carries ``auth_response_uri`` (the redirect URL with ``code``), which adk_rx
    exchanges for ``access_token`` / ``refresh_token``; ``expires_at`` (epoch seconds) says
    when to refresh.
    """

    client_id: str | None = None
    client_secret: Annotated[str | None, _Secret] = None
    auth_uri: str | None = None
    nonce: str | None = None
    state: str | None = None
    redirect_uri: str | None = None
    auth_response_uri: Annotated[str | None, _Secret] = None
    auth_code: Annotated[str | None, _Secret] = None
    access_token: Annotated[str | None, _Secret] = None
    refresh_token: Annotated[str | None, _Secret] = None
    id_token: Annotated[str | None, _Secret] = None
    expires_at: int | None = None
    expires_in: int | None = None
    audience: str | None = None
    prompt: str | None = None
    code_verifier: Annotated[str | None, _Secret] = None
    code_challenge_method: str | None = None
    token_endpoint_auth_method: (
        Literal["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"]
        | None
    ) = "client_secret_basic"


class AuthCredential(_Model):
    """A credential: an API key, HTTP auth or OAuth2 (one of them, per ``auth_type``).

    Example::

        AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k-123")
        AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id="app", client_secret="s", redirect_uri="http://..."),
        )
    """

    auth_type: AuthCredentialTypes
    resource_ref: str | None = None
    api_key: Annotated[str | None, _Secret] = None
    http: HttpAuth | None = None
    oauth2: OAuth2Auth | None = None


def without_secrets(credential: AuthCredential | None) -> AuthCredential | None:
    """A copy with what the agent configured and what the user obtained taken out.

    Kept: the OAuth2 client id, redirect and auth URIs, state, scheme names. Gone: API keys,
    passwords, tokens, the client secret, the code and the redirect URL that carries it.
    """
    if credential is None:
        return None
    out = credential.model_copy(deep=True, update={"api_key": None})
    if out.http is not None:
        out.http = out.http.model_copy(
            update={
                "credentials": HttpCredentials(username=out.http.credentials.username),
                "additional_headers": None,
            }
        )
    if out.oauth2 is not None:
        out.oauth2 = out.oauth2.model_copy(
            update={
                name: None
                for name in (
                    "client_secret",
                    "auth_response_uri",
                    "auth_code",
                    "access_token",
                    "refresh_token",
                    "id_token",
                    "code_verifier",
                )
            }
        )
    if out.__pydantic_extra__:
        out.__pydantic_extra__.clear()
    return out
