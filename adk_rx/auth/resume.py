"""Resuming the calls that waited for a credential (a flow stage of ``adk_rx.auth``).

On the step after the user answered ``adk_request_credential``, each answer is pinned to the
request this session stored (the answer cannot pick another request, client or ``state``),
kept in the invocation's memory under the request's credential key, and the calls that
asked run again. They read it with ``tool_context.get_auth_response``; an OAuth2 code is
exchanged there, with the tool's own client. Other calls of the same pause that asked for the
same credential (they shared the one request) run again as well. An answer for a request of
another agent, or for no request at all, resumes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import ValidationError
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.auth.config import AuthConfig, AuthToolArguments
from adk_rx.auth.credential import AuthCredential, AuthCredentialTypes
from adk_rx.context import InvocationContext
from adk_rx.events import CREDENTIAL_FUNCTION
from adk_rx.flows.functions import handle_function_calls, user_answers
from adk_rx.tools.toolset import toolset_tools

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

__all__ = ["pinned_credential", "resume_credentials"]


def pinned_credential(request: AuthConfig, answer: Any) -> AuthCredential | None:
    """The credential of ``answer`` (an AuthConfig, an AuthCredential, or a bare API key),
    with the request's OAuth2 client, redirect URI and state; None when it holds none."""
    if isinstance(answer, dict) and set(answer) == {"response"}:
        answer = answer["response"]
    credential: AuthCredential | None = None
    raw = request.raw_auth_credential
    if isinstance(answer, str):
        if raw is not None and raw.auth_type is AuthCredentialTypes.API_KEY:
            credential = AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=answer)
    elif isinstance(answer, dict):
        try:
            credential = AuthConfig.model_validate(answer).exchanged_auth_credential
        except (ValidationError, ValueError, TypeError):
            try:
                credential = AuthCredential.model_validate(answer)
            except (ValidationError, ValueError, TypeError):
                credential = None
    if credential is None:
        return None
    asked = request.exchanged_auth_credential
    if credential.oauth2 is not None and asked is not None and asked.oauth2 is not None:
        credential = credential.model_copy(
            update={
                "auth_type": asked.auth_type,
                "oauth2": credential.oauth2.model_copy(
                    update={
                        "client_id": asked.oauth2.client_id,
                        "client_secret": None,
                        "redirect_uri": asked.oauth2.redirect_uri,
                        "state": asked.oauth2.state,
                        "code_challenge_method": asked.oauth2.code_challenge_method,
                        "auth_uri": asked.oauth2.auth_uri,
                        "access_token": None,  # tokens come from the exchange, never the client
                        "refresh_token": None,
                    }
                ),
            }
        )
    return credential


def resume_credentials(agent: LlmAgent, ctx: InvocationContext) -> Observable[Any] | None:
    """The re-run of the calls whose credential request was answered, or None."""
    events = ctx.session.events
    responses = user_answers(events, CREDENTIAL_FUNCTION)
    if not responses:  # asked before the comprehension: a turn with no answers makes neither
        return None
    answered = [r.id for r in responses]
    wanted = set(answered)
    originals: list[types.FunctionCall] = []
    asked: dict[str, str] = {}  # original call id -> request id
    keys: dict[str, str] = {}  # credential key answered -> the invocation that asked
    for event in reversed(events[:-1]):
        if event.author != agent.name:
            continue
        for call in event.get_function_calls():
            if call.name != CREDENTIAL_FUNCTION or call.id not in wanted:
                continue
            try:
                args = AuthToolArguments.model_validate(call.args or {})
            except (ValidationError, ValueError, TypeError):
                continue
            credential = pinned_credential(
                args.auth_config, ctx.shared.credential_answers.get(call.id or "")
            )
            key = args.auth_config.credential_key or args.auth_config.derived_key()
            if credential is not None:
                ctx.shared.credentials[key] = credential
            if args.function_call_id not in asked:
                asked[args.function_call_id] = call.id or ""
            keys[key] = event.invocation_id
    # Calls of the same pause that asked for the same credential got one request between
    # them (one per credential key): they run again too.
    for event in events[:-1]:
        if event.author != agent.name:
            continue
        for call_id, config in event.actions.requested_auth_configs.items():
            key = config.get("credentialKey") if isinstance(config, dict) else None
            if key in keys and keys[key] == event.invocation_id and call_id not in asked:
                asked[call_id] = ""
    if not asked:
        return None
    for event in reversed(events[:-1]):
        if event.author != agent.name:
            continue
        for call in event.get_function_calls():
            if call.id in asked and call.name != CREDENTIAL_FUNCTION:
                originals.append(call)
                asked.pop(call.id or "")
    if not originals:
        return None
    originals.reverse()
    tools = agent.tools_by_name(ctx)
    if not agent.toolsets:
        return handle_function_calls(agent, ctx, originals, tools)

    def resume(found: list[BaseTool]) -> Observable[Any]:
        every = {**tools, **{tool.name: tool for tool in found}}
        return handle_function_calls(agent, ctx, originals, every)

    return toolset_tools(agent, ctx).pipe(ops.flat_map(resume))
