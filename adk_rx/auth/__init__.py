"""Credentials for tools: ask the user, exchange, store, refresh, re-run (google-adk's auth).

One turn through it, for a tool calling a user's OAuth2-protected API::

    tool       resolve_credential / get_auth_response -> None: request_credential(auth_config)
    flow       the response event's actions.requested_auth_configs
               -> an ``adk_request_credential`` call (args: functionCallId, authConfig with the
                  sign-in ``authUri`` and ``state``; no secret) and the turn ends
    client     shows authUri, the user signs in, answers the call with the auth config whose
               exchangedAuthCredential.oauth2.authResponseUri is the redirect URL (``code``)
    runner     takes the answer out of the message before storing it (answers.py): the stored
               event says only ``credential received``
    flow       resume.py pins the answer to the stored request (client, state) and runs the
               asking call again
    tool       get_auth_response: exchanges the code with the tool's own client (oauth2.py,
               authlib), saves the tokens to the Runner's credential service, returns them;
               a wrong code raises CredentialError, which the model sees as ``{"error": ...}``
    next turns the credential comes from the service, refreshed once expired

Modules: ``credential`` (AuthCredential and friends), ``schemes`` (OpenAPI security schemes),
``config`` (AuthConfig), ``oauth2`` (token requests), ``tool_auth`` (what tools call),
``answers`` (the runner's part), ``resume`` (the flow's part), ``credential_service`` and
``sql_credential_service`` (where credentials are kept; the SQL one encrypted at rest).
Nothing here writes a secret to an event, a state value, a log line or a span.
"""

from adk_rx.auth.config import AuthConfig, AuthToolArguments
from adk_rx.auth.credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)
from adk_rx.auth.credential_service import BaseCredentialService, InMemoryCredentialService
from adk_rx.auth.schemes import (
    APIKey,
    APIKeyIn,
    AuthScheme,
    HTTPBase,
    HTTPBearer,
    OAuth2,
    OAuthFlow,
    OAuthFlows,
    OAuthGrantType,
    OpenIdConnect,
)
from adk_rx.auth.sql_credential_service import SqlCredentialService
from adk_rx.errors import CredentialError

__all__ = [
    "APIKey",
    "APIKeyIn",
    "AuthConfig",
    "AuthCredential",
    "AuthCredentialTypes",
    "AuthScheme",
    "AuthToolArguments",
    "BaseCredentialService",
    "CredentialError",
    "HTTPBase",
    "HTTPBearer",
    "HttpAuth",
    "HttpCredentials",
    "InMemoryCredentialService",
    "OAuth2",
    "OAuth2Auth",
    "OAuthFlow",
    "OAuthFlows",
    "OAuthGrantType",
    "OpenIdConnect",
    "SqlCredentialService",
]
