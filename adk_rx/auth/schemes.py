"""Auth schemes: how an API wants to be called (OpenAPI 3's security schemes).

The same JSON as an OpenAPI document's ``components.securitySchemes`` entries and as
FastAPI's models (which google-adk uses): ``{"type": "oauth2", "flows": {"authorizationCode":
{"authorizationUrl": ..., "tokenUrl": ..., "scopes": {...}}}}``. :func:`parse_scheme` takes
that JSON, one of these models, or any pydantic model that dumps to it (FastAPI's included).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, alias_generators

__all__ = [
    "APIKey",
    "APIKeyIn",
    "AuthScheme",
    "HTTPBase",
    "HTTPBearer",
    "OAuth2",
    "OAuthFlow",
    "OAuthFlows",
    "OAuthGrantType",
    "OpenIdConnect",
    "parse_scheme",
]


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="allow", alias_generator=alias_generators.to_camel, populate_by_name=True
    )


class APIKeyIn(StrEnum):
    """Where an API key goes."""

    query = "query"
    header = "header"
    cookie = "cookie"


class APIKey(_Model):
    """An API key sent in a query parameter, a header or a cookie named ``name``."""

    type_: Literal["apiKey"] = Field(default="apiKey", alias="type")
    description: str | None = None
    in_: APIKeyIn = Field(alias="in")
    name: str


class HTTPBase(_Model):
    """HTTP authentication with an Authorization scheme (``basic``, ``bearer``, ...)."""

    type_: Literal["http"] = Field(default="http", alias="type")
    description: str | None = None
    scheme: str


class HTTPBearer(HTTPBase):
    """``Authorization: Bearer <token>``."""

    scheme: Literal["bearer"] = "bearer"  # pyright: ignore[reportIncompatibleVariableOverride]
    bearer_format: str | None = None


class OAuthFlow(_Model):
    """One OAuth2 flow: its endpoints and scopes (name -> description)."""

    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)
    authorization_url: str | None = None
    token_url: str | None = None


class OAuthFlows(_Model):
    """The OAuth2 flows an API supports."""

    implicit: OAuthFlow | None = None
    password: OAuthFlow | None = None
    client_credentials: OAuthFlow | None = None
    authorization_code: OAuthFlow | None = None


class OAuth2(_Model):
    """OAuth2, with its flows."""

    type_: Literal["oauth2"] = Field(default="oauth2", alias="type")
    description: str | None = None
    flows: OAuthFlows


class OpenIdConnect(_Model):
    """OpenID Connect, discovered from ``openIdConnectUrl`` or with its endpoints given."""

    type_: Literal["openIdConnect"] = Field(default="openIdConnect", alias="type")
    description: str | None = None
    open_id_connect_url: str | None = None
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    scopes: list[str] | None = None


class OAuthGrantType(StrEnum):
    """The OAuth2 grant a flow uses."""

    CLIENT_CREDENTIALS = "client_credentials"
    AUTHORIZATION_CODE = "authorization_code"
    IMPLICIT = "implicit"
    PASSWORD = "password"

    @staticmethod
    def from_flow(flows: OAuthFlows) -> OAuthGrantType | None:
        """The grant of the first flow set (client credentials first, as google-adk)."""
        if flows.client_credentials:
            return OAuthGrantType.CLIENT_CREDENTIALS
        if flows.authorization_code:
            return OAuthGrantType.AUTHORIZATION_CODE
        if flows.implicit:
            return OAuthGrantType.IMPLICIT
        if flows.password:
            return OAuthGrantType.PASSWORD
        return None


AuthScheme = OAuth2 | OpenIdConnect | APIKey | HTTPBearer | HTTPBase
"""Any of the security schemes."""

_SCHEME: TypeAdapter[AuthScheme] = TypeAdapter(
    AuthScheme, config=None
)  # left to right: HTTPBearer before HTTPBase


def parse_scheme(value: Any) -> AuthScheme:
    """``value`` (JSON, one of these models, or a pydantic model such as FastAPI's) as a scheme.

    Raises:
        pydantic.ValidationError: it is no security scheme.
    """
    if isinstance(value, (OAuth2, OpenIdConnect, APIKey, HTTPBase)):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, dict) and value.get("type") == "http":
        scheme = str(value.get("scheme", "")).lower()
        model = HTTPBearer if scheme == "bearer" else HTTPBase
        return model.model_validate({**value, "scheme": scheme})
    return _SCHEME.validate_python(value)
