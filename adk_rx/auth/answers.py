"""The user's answers to credential requests, taken out of the message before it is stored.

An answer to ``adk_request_credential`` carries a secret (the redirect URL with its code, an
API key, a token). The Runner passes the user's message through :func:`take_answers` before
storing it: each answer is kept in the invocation's memory (``shared.credential_answers``, by
request id) and the stored response says only which credential arrived. So no secret reaches
the session store, the events a client reads back, or a span; after a crash the tool asks
again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_rx.events import CREDENTIAL_FUNCTION

if TYPE_CHECKING:
    from adk_rx.invocation_shared import InvocationShared

__all__ = ["MAX_ANSWER_CHARS", "RECEIVED", "take_answers"]

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
