"""OAuth2 over authlib: the sign-in URI, the code exchange, client credentials, the refresh.

Each function takes the scheme (its endpoints) and a credential carrying the client; each
returns a new credential and never changes its argument. Token requests are blocking HTTP
calls (authlib's httpx client, 10 s timeout): callers run them where blocking is allowed
(a sync tool runs on the I/O scheduler). A failed request raises :class:`CredentialError`,
whose text names the endpoint and the OAuth2 error code and never a secret.
"""

from __future__ import annotations

import time
from typing import Any

from adk_rx.auth.credential import AuthCredential, OAuth2Auth
from adk_rx.auth.schemes import AuthScheme, OAuth2, OpenIdConnect
from adk_rx.errors import ConfigurationError, CredentialError

__all__ = [
    "authorization_uri",
    "client_credentials",
    "exchange_code",
    "is_expired",
    "refresh",
    "token_endpoint",
]

TIMEOUT_SECONDS = 10.0


def _authlib() -> Any:  # authlib ships no type information
    try:
        from authlib.integrations.httpx_client import OAuth2Client
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError("OAuth2 needs authlib: pip install 'adk_rx[auth]'") from exc
    return OAuth2Client


def _scopes(scheme: AuthScheme) -> list[str]:
    if isinstance(scheme, OpenIdConnect):
        return list(scheme.scopes or [])
    if isinstance(scheme, OAuth2):
        flows = scheme.flows
        flow = (
            flows.authorization_code or flows.implicit or flows.client_credentials or flows.password
        )
        return list(flow.scopes) if flow is not None else []
    return []


def _authorization_endpoint(scheme: AuthScheme) -> str:
    url: str | None = None
    if isinstance(scheme, OpenIdConnect):
        url = scheme.authorization_endpoint
    elif isinstance(scheme, OAuth2):
        flows = scheme.flows
        url = (flows.authorization_code and flows.authorization_code.authorization_url) or (
            flows.implicit and flows.implicit.authorization_url
        )
    if not url:
        raise ConfigurationError("the auth scheme declares no authorization endpoint")
    return url


def token_endpoint(scheme: AuthScheme) -> str:
    """The scheme's token URL (authorization code first, then client credentials)."""
    url: str | None = None
    if isinstance(scheme, OpenIdConnect):
        url = scheme.token_endpoint
    elif isinstance(scheme, OAuth2):
        flows = scheme.flows
        url = (flows.authorization_code and flows.authorization_code.token_url) or (
            flows.client_credentials and flows.client_credentials.token_url
        )
    if not url:
        raise CredentialError("the auth scheme declares no token endpoint")
    return url


def _client(oauth2: OAuth2Auth, **extra: Any) -> Any:
    method = oauth2.token_endpoint_auth_method or "client_secret_basic"
    if not oauth2.client_secret:
        method = "none"
    return _authlib()(
        oauth2.client_id,
        oauth2.client_secret,
        redirect_uri=oauth2.redirect_uri,
        token_endpoint_auth_method=method,
        timeout=TIMEOUT_SECONDS,
        **extra,
    )


def _oauth2(credential: AuthCredential | None) -> OAuth2Auth:
    if credential is None or credential.oauth2 is None or not credential.oauth2.client_id:
        raise ConfigurationError("OAuth2 needs a raw_auth_credential with oauth2.client_id")
    return credential.oauth2


def authorization_uri(scheme: AuthScheme, credential: AuthCredential | None) -> AuthCredential:
    """A copy of ``credential`` with the sign-in ``auth_uri`` and a fresh ``state``."""
    oauth2 = _oauth2(credential)
    assert credential is not None
    with _client(oauth2, scope=" ".join(_scopes(scheme))) as client:
        params: dict[str, str] = {"access_type": "offline", "prompt": oauth2.prompt or "consent"}
        if oauth2.audience:
            params["audience"] = oauth2.audience
        if oauth2.nonce:
            params["nonce"] = oauth2.nonce
        uri, state = client.create_authorization_url(_authorization_endpoint(scheme), **params)
    return credential.model_copy(
        update={"oauth2": oauth2.model_copy(update={"auth_uri": uri, "state": state})}
    )


def _with_tokens(credential: AuthCredential, oauth2: OAuth2Auth, token: Any) -> AuthCredential:
    expires_at = token.get("expires_at")
    if expires_at is None and token.get("expires_in") is not None:
        expires_at = int(time.time()) + int(token["expires_in"])
    updated = oauth2.model_copy(
        update={
            "access_token": token.get("access_token"),
            "refresh_token": token.get("refresh_token") or oauth2.refresh_token,
            "id_token": token.get("id_token"),
            "expires_at": int(expires_at) if expires_at is not None else None,
            "expires_in": token.get("expires_in"),
            "auth_code": None,
            "auth_response_uri": None,
        }
    )
    return credential.model_copy(update={"oauth2": updated})


def _failed(what: str, url: str, exc: Exception) -> CredentialError:
    code = getattr(exc, "error", None) or type(exc).__name__
    return CredentialError(f"OAuth2 {what} at {url} failed: {code}")


def exchange_code(scheme: AuthScheme, credential: AuthCredential) -> AuthCredential:
    """Exchanges the code of ``auth_response_uri`` (or ``auth_code``) for tokens.

    The redirect's ``state`` must be the one adk_rx made (``credential.oauth2.state``).
    """
    oauth2 = _oauth2(credential)
    url = token_endpoint(scheme)
    args: dict[str, Any] = {}
    if oauth2.auth_response_uri:
        args["authorization_response"] = oauth2.auth_response_uri
    elif oauth2.auth_code:
        args["code"] = oauth2.auth_code
        args["grant_type"] = "authorization_code"
    else:
        raise CredentialError("the auth response carries no code")
    try:
        with _client(oauth2, state=oauth2.state) as client:
            token = client.fetch_token(url, state=oauth2.state, **args)
    except Exception as exc:
        raise _failed("code exchange", url, exc) from None
    return _with_tokens(credential, oauth2, token)


def client_credentials(scheme: AuthScheme, credential: AuthCredential) -> AuthCredential:
    """Tokens for the client itself (the client-credentials grant)."""
    oauth2 = _oauth2(credential)
    url = token_endpoint(scheme)
    try:
        with _client(oauth2, scope=" ".join(_scopes(scheme))) as client:
            token = client.fetch_token(url, grant_type="client_credentials")
    except Exception as exc:
        raise _failed("client credentials request", url, exc) from None
    return _with_tokens(credential, oauth2, token)


def is_expired(credential: AuthCredential, *, leeway: int = 60) -> bool:
    """True when an OAuth2 access token expires within ``leeway`` seconds."""
    oauth2 = credential.oauth2
    if oauth2 is None or oauth2.expires_at is None:
        return False
    return oauth2.expires_at - leeway <= time.time()


def refresh(scheme: AuthScheme, credential: AuthCredential) -> AuthCredential:
    """New tokens from the refresh token."""
    oauth2 = _oauth2(credential)
    if not oauth2.refresh_token:
        raise CredentialError("the credential has expired and carries no refresh token")
    url = token_endpoint(scheme)
    try:
        with _client(oauth2) as client:
            token = client.refresh_token(url, refresh_token=oauth2.refresh_token)
    except Exception as exc:
        raise _failed("refresh", url, exc) from None
    return _with_tokens(credential, oauth2, token)
