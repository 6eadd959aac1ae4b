"""What a tool calls: ask for a credential, read the one the user gave, or get one unasked.

:func:`request_credential` records the ask on the call's actions (the flow turns it into an
``adk_request_credential`` call and ends the turn); :func:`get_auth_response` reads the
credential after the user answered (exchanging an OAuth2 code for tokens on first use, saving
it to the credential service, refreshing it once expired); :func:`resolve_credential` does
what a REST or MCP tool needs: a configured API key or bearer token as it is, client
credentials fetched, a user's sign-in asked for when nothing usable is stored.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from adk_rx.auth import oauth2
from adk_rx.auth.config import AuthConfig
from adk_rx.auth.credential import AuthCredential, AuthCredentialTypes
from adk_rx.auth.schemes import OAuth2, OpenIdConnect
from adk_rx.errors import ConfigurationError, CredentialError

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["get_auth_response", "refreshed_credential", "request_credential", "resolve_credential"]

_log = logging.getLogger(__name__)


def _is_oauth(config: AuthConfig) -> bool:
    return isinstance(config.auth_scheme, (OAuth2, OpenIdConnect))


def _uses_client_credentials(config: AuthConfig) -> bool:
    scheme = config.auth_scheme
    return (
        isinstance(scheme, OAuth2)
        and scheme.flows.client_credentials is not None
        and scheme.flows.authorization_code is None
    )


def request_credential(tool_context: ToolContext, auth_config: AuthConfig) -> None:
    """Asks the user for a credential for this call; the turn ends and resumes on the answer.

    For OAuth2 with an authorization-code flow the request carries a sign-in URI (with a fresh
    ``state``) made from the configured client; no secret is ever in the request.
    """
    call_id = tool_context.function_call_id
    if not call_id:
        raise ConfigurationError("request_credential needs a function call id (a tool context)")
    request = auth_config
    exchanged = auth_config.exchanged_auth_credential
    if _is_oauth(auth_config) and not (
        exchanged and exchanged.oauth2 and exchanged.oauth2.auth_uri
    ):
        request = auth_config.model_copy(
            update={
                "exchanged_auth_credential": oauth2.authorization_uri(
                    auth_config.auth_scheme, auth_config.raw_auth_credential
                )
            }
        )
    tool_context.actions.requested_auth_configs[call_id] = request.for_client().model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


def _with_client(credential: AuthCredential, config: AuthConfig) -> AuthCredential:
    """``credential`` with the tool's own OAuth2 client (id and secret) put back."""
    raw = config.raw_auth_credential
    if raw is None or raw.oauth2 is None or credential.oauth2 is None:
        return credential
    client = {"client_id": raw.oauth2.client_id, "client_secret": raw.oauth2.client_secret}
    if credential.oauth2.redirect_uri is None:
        client["redirect_uri"] = raw.oauth2.redirect_uri
    return credential.model_copy(update={"oauth2": credential.oauth2.model_copy(update=client)})


def _get_auth_response(tool_context: ToolContext, auth_config: AuthConfig) -> AuthCredential | None:
    """The credential for ``auth_config``: the user's answer of this turn, else a stored one.

    An answered OAuth2 code is exchanged for tokens (once); an expired token is refreshed.
    Either is saved to the Runner's credential service. Blocking (token requests).

    Raises:
        CredentialError: the code exchange failed (a wrong or used code, a mismatched state).
    """
    ctx = tool_context.invocation_context
    key = auth_config.credential_key or auth_config.derived_key()
    service = ctx.services.credential_service
    scope = {"app_name": ctx.app_name, "user_id": ctx.user_id, "credential_key": key}
    credential: AuthCredential | None = ctx.shared.credentials.get(key)
    fresh = credential is not None
    if credential is None and service is not None:
        credential = service.load_credential(**scope)
    if credential is None:
        return None
    credential = _with_client(credential, auth_config)
    changed = False
    oauth = credential.oauth2
    if oauth is not None and _is_oauth(auth_config):
        if not oauth.access_token and (oauth.auth_response_uri or oauth.auth_code):
            try:
                credential = oauth2.exchange_code(auth_config.auth_scheme, credential)
            except CredentialError:
                ctx.shared.credentials.pop(key, None)  # the next call asks the user again
                raise
            changed = True
        elif oauth.access_token and oauth2.is_expired(credential):
            try:
                credential = oauth2.refresh(auth_config.auth_scheme, credential)
            except CredentialError as exc:
                _log.warning("refreshing a credential failed (%s); the user signs in again", exc)
                return None
            changed = True
    if changed or fresh:
        ctx.shared.credentials[key] = credential
        if service is not None:
            service.save_credential(**scope, credential=credential)
    return credential


def _resolve_credential(
    tool_context: ToolContext, auth_config: AuthConfig
) -> AuthCredential | None:
    """A usable credential now, or None after asking the user for one.

    A configured API key or HTTP secret is used as it is; OAuth2 client credentials are
    fetched (and kept in the credential service); otherwise the user's credential is read
    with :func:`get_auth_response` and, when there is none, requested.
    """
    raw = auth_config.raw_auth_credential
    if raw is not None and (
        (raw.auth_type is AuthCredentialTypes.API_KEY and raw.api_key)
        or (raw.http is not None and (raw.http.credentials.token or raw.http.credentials.password))
        or (raw.oauth2 is not None and raw.oauth2.access_token)
    ):
        return raw
    found = get_auth_response(tool_context, auth_config)
    if found is not None:
        return found
    if _uses_client_credentials(auth_config) and raw is not None:
        credential = oauth2.client_credentials(auth_config.auth_scheme, raw)
        ctx = tool_context.invocation_context
        key = auth_config.credential_key or auth_config.derived_key()
        ctx.shared.credentials[key] = credential
        service = ctx.services.credential_service
        if service is not None:
            service.save_credential(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                credential_key=key,
                credential=credential,
            )
        return credential
    request_credential(tool_context, auth_config)
    return None


def _refreshed_credential(
    tool_context: ToolContext, auth_config: AuthConfig
) -> AuthCredential | None:
    """New tokens for a credential the API rejected (its refresh token used), saved; None when
    it cannot be refreshed (no refresh token, or the server refused): the user signs in again.
    """
    ctx = tool_context.invocation_context
    key = auth_config.credential_key or auth_config.derived_key()
    service = ctx.services.credential_service
    scope = {"app_name": ctx.app_name, "user_id": ctx.user_id, "credential_key": key}
    current: AuthCredential | None = ctx.shared.credentials.get(key)
    if current is None and service is not None:
        current = service.load_credential(**scope)
    if current is None or current.oauth2 is None or not current.oauth2.refresh_token:
        return None
    try:
        fresh = oauth2.refresh(auth_config.auth_scheme, _with_client(current, auth_config))
    except (CredentialError, ConfigurationError) as exc:
        _log.warning("refreshing a rejected credential failed (%s); the user signs in again", exc)
        ctx.shared.credentials.pop(key, None)
        return None
    ctx.shared.credentials[key] = fresh
    if service is not None:
        service.save_credential(**scope, credential=fresh)
    return fresh


def get_auth_response(tool_context: ToolContext, auth_config: AuthConfig) -> AuthCredential | None:
    """The credential for ``auth_config``: the user's answer of this turn, else a stored one.

    An answered OAuth2 code is exchanged for tokens (once, however many calls of the turn
    ask at the same time); an expired token is refreshed. Either is saved to the Runner's
    credential service. Blocking (token requests).

    Raises:
        CredentialError: the code exchange failed (a wrong or used code, a mismatched state).
    """
    with tool_context.invocation_context.shared.credential_lock:
        return _get_auth_response(tool_context, auth_config)


def resolve_credential(tool_context: ToolContext, auth_config: AuthConfig) -> AuthCredential | None:
    """A usable credential now, or None after asking the user for one.

    A configured API key or HTTP secret is used as it is; OAuth2 client credentials are
    fetched (and kept in the credential service); otherwise the user's credential is read
    with :func:`get_auth_response` and, when there is none, requested.
    """
    with tool_context.invocation_context.shared.credential_lock:
        return _resolve_credential(tool_context, auth_config)


def refreshed_credential(
    tool_context: ToolContext, auth_config: AuthConfig
) -> AuthCredential | None:
    """New tokens for a credential the API rejected (its refresh token used), saved; None when
    it cannot be refreshed (no refresh token, or the server refused): the user signs in again.
    """
    with tool_context.invocation_context.shared.credential_lock:
        return _refreshed_credential(tool_context, auth_config)
