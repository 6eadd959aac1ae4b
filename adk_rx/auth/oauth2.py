"""OAuth2 over authlib: the sign-in URI, the code exchange, client credentials, the refresh.

Each function takes the scheme (its endpoints) and a credential carrying the client; each
returns a new credential and never changes its argument. Token requests are blocking HTTP
calls (authlib's httpx client, 10 s timeout): callers run them where blocking is allowed
(a sync tool runs on the I/O scheduler). A public client (no secret) signs in with PKCE
(S256), its verifier derived from the ``state`` (:func:`pkce_verifier`). A failed request
raises :class:`CredentialError`, whose text names the endpoint and the OAuth2 error code and
never a secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
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
    "pkce_verifier",
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


_PKCE_KEY: list[bytes] = []


def _pkce_key() -> bytes:
    """The key PKCE verifiers are derived with: from ``ADK_RX_CREDENTIAL_KEY`` when set (so a
    sign-in survives a restart, and every server process derives the same), else one random
    key per process."""
    if not _PKCE_KEY:
        configured = os.environ.get("ADK_RX_CREDENTIAL_KEY", "")
        material = configured.encode() if configured else secrets.token_bytes(32)
        _PKCE_KEY.append(hashlib.sha256(b"adk_rx pkce\0" + material).digest())
    return _PKCE_KEY[0]


def pkce_verifier(state: str) -> str:
    """The PKCE code verifier of the sign-in with ``state`` (RFC 7636, 43 characters).

    Derived from the state with a key that never leaves the process, so the verifier is in
    no event and no client's hands, and nothing has to be kept between the request and the
    answer.
    """
    digest = hmac.new(_pkce_key(), state.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _uses_pkce(oauth2: OAuth2Auth) -> bool:
    """A public client (no secret) always uses PKCE (S256); a confidential one when asked."""
    return not oauth2.client_secret or oauth2.code_challenge_method == "S256"


def authorization_uri(scheme: AuthScheme, credential: AuthCredential | None) -> AuthCredential:
    """A copy of ``credential`` with the sign-in ``auth_uri`` and a fresh ``state`` (and, for a
    public client, a PKCE S256 challenge)."""
    oauth2 = _oauth2(credential)
    assert credential is not None
    pkce = _uses_pkce(oauth2)
    extra: dict[str, Any] = {"code_challenge_method": "S256"} if pkce else {}
    with _client(oauth2, scope=" ".join(_scopes(scheme)), **extra) as client:
        params: dict[str, str] = {"access_type": "offline", "prompt": oauth2.prompt or "consent"}
        if oauth2.audience:
            params["audience"] = oauth2.audience
        if oauth2.nonce:
            params["nonce"] = oauth2.nonce
        state = secrets.token_urlsafe(24)
        verifier = pkce_verifier(state) if pkce else None
        uri, state = client.create_authorization_url(
            _authorization_endpoint(scheme), state=state, code_verifier=verifier, **params
        )
    update: dict[str, Any] = {"auth_uri": uri, "state": state}
    if pkce:
        update["code_challenge_method"] = "S256"
    return credential.model_copy(update={"oauth2": oauth2.model_copy(update=update)})


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
    if oauth2.code_challenge_method == "S256" and oauth2.state:
        args["code_verifier"] = pkce_verifier(oauth2.state)
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
