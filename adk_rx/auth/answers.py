"""The user's answers to credential requests, taken out of the message before it is stored.

An answer to ``adk_request_credential`` carries a secret (the redirect URL with its code, an
API key, a token). The Runner passes the user's message through :func:`take_answers` before
storing it: each answer is kept in the invocation's memory (``shared.credential_answers``, by
request id) and the stored response says only which credential arrived. So no secret reaches
the session store, the events a client reads back, or a span; after a crash the tool asks
again.

:func:`credential_answer` and :func:`sign_in_uri` are the client's side, for ``adk-rx run``:
the sign-in link to show, and the answer made from what the user pastes back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_rx.events import CREDENTIAL_FUNCTION

if TYPE_CHECKING:
    from adk_rx.invocation_shared import InvocationShared

__all__ = ["MAX_ANSWER_CHARS", "RECEIVED", "credential_answer", "sign_in_uri", "take_answers"]

RECEIVED = {"status": "credential received"}
"""What the stored answer to a credential request says in place of the credential."""

MAX_ANSWER_CHARS = 64 * 1024
"""An answer larger than this (as JSON) is dropped, not kept in memory."""


def take_answers(shared: InvocationShared, content: types.Content) -> types.Content:
    """``content`` with each credential answer replaced by :data:`RECEIVED`; the answers kept."""
    parts = content.parts or []
    if not any(
        p.function_response and p.function_response.name == CREDENTIAL_FUNCTION for p in parts
    ):
        return content
    kept: list[types.Part] = []
    for part in parts:
        response = part.function_response
        if response is None or response.name != CREDENTIAL_FUNCTION:
            kept.append(part)
            continue
        answer: Any = response.response
        if response.id and _small(answer):
            shared.credential_answers[response.id] = answer
        kept.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=response.id, name=response.name, response=dict(RECEIVED)
                )
            )
        )
    return content.model_copy(update={"parts": kept})


def _small(answer: Any) -> bool:
    try:
        return len(types.FunctionResponse(response=answer).model_dump_json()) <= MAX_ANSWER_CHARS
    except Exception:
        return False


def credential_answer(args: Mapping[str, Any], reply: str) -> dict[str, Any] | None:
    """The answer to an ``adk_request_credential`` call (its ``args``) from what a user typed.

    OAuth2 / OpenID Connect: ``reply`` is the URL the browser was sent back to after signing
    in. An API key scheme: the key. HTTP: the token (bearer) or ``user:password`` (basic).
    None when ``reply`` is empty (the request stays open).
    """
    reply = reply.strip()
    config = args.get("authConfig")
    if not reply or not isinstance(config, Mapping):
        return None
    scheme = config.get("authScheme")
    kind = scheme.get("type") if isinstance(scheme, Mapping) else None
    if kind in ("oauth2", "openIdConnect"):
        answer: dict[str, Any] = _mapping(config)
        exchanged = _mapping(config.get("exchangedAuthCredential")) or {"authType": "oauth2"}
        exchanged["oauth2"] = {**_mapping(exchanged.get("oauth2")), "authResponseUri": reply}
        answer["exchangedAuthCredential"] = exchanged
        return answer
    if kind == "apiKey":
        return {"authType": "apiKey", "apiKey": reply}
    if kind == "http":
        name = str(scheme.get("scheme", "bearer")).lower() if isinstance(scheme, Mapping) else ""
        if name == "basic":
            user, _, password = reply.partition(":")
            credentials: dict[str, str] = {"username": user, "password": password}
        else:
            credentials = {"token": reply}
        return {"authType": "http", "http": {"scheme": name, "credentials": credentials}}
    return None


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` as a dict of string keys ({} when it is no mapping)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]


def sign_in_uri(args: Mapping[str, Any]) -> str | None:
    """The sign-in URI an ``adk_request_credential`` call carries (http or https only)."""
    config = args.get("authConfig")
    if not isinstance(config, Mapping):
        return None
    exchanged = config.get("exchangedAuthCredential")
    oauth2 = exchanged.get("oauth2") if isinstance(exchanged, Mapping) else None
    uri = oauth2.get("authUri") if isinstance(oauth2, Mapping) else None
    if isinstance(uri, str) and uri.lower().startswith(("https://", "http://")):
        return uri
    return None
