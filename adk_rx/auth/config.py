"""AuthConfig: what a tool asks for (a scheme and the client it has), and what it got back.

``credential_key`` names the credential in a credential service; when not given it is derived
from the scheme and the raw credential exactly as google-adk derives it (a digest of their
JSON with every per-sign-in field left out), so both runtimes file a credential under one key.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field, field_serializer, field_validator, model_validator

from adk_rx.auth.credential import AuthCredential, _Model, without_secrets
from adk_rx.auth.schemes import AuthScheme, parse_scheme

__all__ = ["AuthConfig", "AuthToolArguments"]

_PER_SIGN_IN = (
    "auth_uri",
    "state",
    "auth_response_uri",
    "auth_code",
    "access_token",
    "refresh_token",
    "expires_at",
    "expires_in",
    "redirect_uri",
)


def _digest(model: BaseModel) -> str:
    if model.model_extra:
        model = model.model_copy(deep=True)
        assert model.model_extra is not None
        model.model_extra.clear()
    dumped = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    canonical = json.dumps(dumped, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class AuthConfig(_Model):
    """A tool's auth: the scheme, the client it has, and the credential obtained for it.

    Attributes:
        auth_scheme: how the API authenticates (OAuth2, API key, HTTP bearer, ...).
        raw_auth_credential: what the tool is configured with (an OAuth2 client id and secret,
            an API key).
        exchanged_auth_credential: what adk_rx and the client fill in: the sign-in URI and
            state adk_rx makes, the redirect URL the client sends back.
        credential_key: the name the credential is stored under (derived when not given).
    """

    auth_scheme: AuthScheme
    raw_auth_credential: AuthCredential | None = None
    exchanged_auth_credential: AuthCredential | None = None
    credential_key: str | None = Field(default=None)

    @field_validator("auth_scheme", mode="before")
    @classmethod
    def _scheme(cls, value: Any) -> AuthScheme:
        return parse_scheme(value)

    @field_serializer("auth_scheme")
    def _dump_scheme(self, scheme: AuthScheme) -> dict[str, Any]:
        return scheme.model_dump(by_alias=True, exclude_none=True, mode="json")

    @model_validator(mode="after")
    def _key(self) -> AuthConfig:
        if not self.credential_key:
            self.credential_key = self.derived_key()
        return self

    def derived_key(self) -> str:
        """The key google-adk derives from the scheme and the raw credential."""
        scheme = self.auth_scheme
        scheme_name = f"{scheme.type_}_{_digest(scheme)}"
        credential = self.raw_auth_credential
        if credential is not None and credential.oauth2 is not None:
            credential = credential.model_copy(
                update={"oauth2": credential.oauth2.model_copy(update=dict.fromkeys(_PER_SIGN_IN))}
            )
        name = (
            f"{credential.auth_type.value}_{_digest(credential)}" if credential is not None else ""
        )
        return f"adk_{scheme_name}_{name}"

    def for_client(self) -> AuthConfig:
        """A copy that may be stored in an event and sent to a client: no secret in it."""
        return self.model_copy(
            update={
                "raw_auth_credential": without_secrets(self.raw_auth_credential),
                "exchanged_auth_credential": without_secrets(self.exchanged_auth_credential),
            }
        )


class AuthToolArguments(_Model):
    """The arguments of an ``adk_request_credential`` call: the call that asked, and its ask."""

    function_call_id: str
    auth_config: AuthConfig
