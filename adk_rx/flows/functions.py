"""Function calls: run the tools a model asked for and merge their responses.

For one model event, every call runs (concurrently, or one by one under
``ToolExecutionMode.SEQUENTIAL``) through: before-tool callbacks (plugins first; a dict
result replaces the tool), the tool (with ``RunConfig.tool_timeout``), on-tool-error
callbacks when it fails, after-tool callbacks. The responses become ONE event, parts in
call order, actions merged in call order.

Errors the model can recover from never end the run: an unknown tool name, invalid
arguments, a tool that raises or times out all become ``{"error": "..."}`` responses. The
traceback of a tool that raised is logged and kept in the response event's
``custom_metadata`` (see :mod:`adk_rx.flows.tool_errors`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext, ToolContext
from adk_rx.events import (
    CONFIRMATION_FUNCTION,
    CREDENTIAL_FUNCTION,
    EMPTY_ACTIONS,
    Event,
    EventActions,
    ToolConfirmation,
    new_call_id,
)
from adk_rx.flows.dedupe import dedupe_metadata
from adk_rx.flows.tool_call import NO_RESPONSE, Call, run_call
from adk_rx.flows.tool_errors import TRACEBACKS_KEY
from adk_rx.flows.tool_progress import connect_progress
from adk_rx.models.copies import replaced
from adk_rx.run_config import ToolExecutionMode
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.sync import items as rx_items
from adk_rx.rx.with_sink import with_sink
from adk_rx.usage import TokenUsage, usage_metadata

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

__all__ = [
    "call_events",
    "call_items",
    "handle_calls",
    "handle_function_calls",
    "user_answers",
]


def user_answers(events: Sequence[Event], name: str) -> list[types.FunctionResponse]:
    """The answers to ``name`` calls (function responses with an id) in the session's last event,
    when the user wrote it; empty for any other last event, the common case checked first."""
    if not events or events[-1].author != "user":
        return []
    content = events[-1].content
    for part in content.parts or () if content is not None else ():
        if part.function_response is not None:
            break
    else:
        return []  # the user's message answers nothing (every step asks: no call here)
    return [r for r in events[-1].get_function_responses() if r.name == name and r.id]


def handle_function_calls(
    agent: LlmAgent,
    ctx: InvocationContext,
    calls: Sequence[types.FunctionCall],
    tools: Mapping[str, BaseTool],
    confirmations: Mapping[str, ToolConfirmation] | None = None,
) -> Observable[Event]:
    """Runs ``calls``; emits an optional confirmation-request event, then the response event.

    Emits nothing when no call produced a response (e.g. only long-running calls that
    have no result yet). Call it when the work should start (inside a ``defer`` or at a
    step's start): a single call's callbacks run at once, and a single tool that answered
    at once gives a SyncObservable of the events.
    """
    return handle_calls(agent, ctx, call_items(ctx, calls, tools, confirmations))


def handle_calls(agent: LlmAgent, ctx: InvocationContext, items: list[Call]) -> Observable[Event]:
    """:func:`handle_function_calls` of the calls made into ``items`` (:func:`call_items`)."""
    reporting = [it for it in items if it.tool is not None and it.tool.reports_progress]
    if not reporting:
        return _handle(agent, ctx, items)

    def build(sink: Callable[[Event], None]) -> Observable[Event]:
        for it in reporting:
            assert it.tool is not None
            connect_progress(agent, ctx, it.context, it.tool, sink)
        return _handle(agent, ctx, items)

    return with_sink(build)


def call_items(
    ctx: InvocationContext,
    calls: Sequence[types.FunctionCall],
    tools: Mapping[str, BaseTool],
    confirmations: Mapping[str, ToolConfirmation] | None = None,
) -> list[Call]:
    """Each call with its tool (None: unknown) and its own ToolContext."""
    return [
        Call(
            call,
            tools.get(call.name or ""),
            ToolContext(
                ctx,
                function_call_id=call.id,
                tool_name=call.name,
                tool_confirmation=None
                if confirmations is None
                else confirmations.get(call.id or ""),
            ),
        )
        for call in calls
    ]


def call_events(agent: LlmAgent, ctx: InvocationContext, item: Call, result: Any) -> list[Event]:
    """The events of one call's ``result`` (what :func:`handle_function_calls` emits for it)."""
    return _event_list(agent, ctx, [item], [result])


def _handle(agent: LlmAgent, ctx: InvocationContext, items: list[Call]) -> Observable[Event]:
    collected: Observable[list[Any]]
    if len(items) == 1:  # called at subscribe time (by the flow's defer): run it now
        answered = run_call(agent, ctx, items[0])
        if sync.is_sync(answered):  # the tool answered at once: the events are here too
            return rx_items(_event_list(agent, ctx, items, list(answered.items_now())))
        return answered.pipe(concat_map_direct(lambda result: _events(agent, ctx, items, [result])))
    singles = [rx.defer(lambda _, it=it: run_call(agent, ctx, it)) for it in items]
    if ctx.run_config.tool_execution_mode is ToolExecutionMode.SEQUENTIAL:
        collected = rx.concat(*singles).pipe(ops.to_list())
    else:
        collected = rx.fork_join(*singles).pipe(ops.map(list))

    def emit(results: list[Any]) -> Observable[Event]:
        return _events(agent, ctx, items, results)

    return collected.pipe(ops.flat_map(emit))


def _events(
    agent: LlmAgent, ctx: InvocationContext, items: list[Call], results: list[Any]
) -> Observable[Event]:
    return rx_items(_event_list(agent, ctx, items, results))


def _event_list(
    agent: LlmAgent, ctx: InvocationContext, items: list[Call], results: list[Any]
) -> list[Event]:
    """An optional credential-request event (it ends the invocation), an optional
    confirmation-request event, then the merged response event."""
    parts: list[types.Part] = []
    actions = EMPTY_ACTIONS  # (frozen: shared, as freeze() shares it)
    for item, result in zip(items, results, strict=True):
        frozen = item.context.frozen_actions()
        if frozen is not EMPTY_ACTIONS:  # (merging the empty actions changes nothing)
            actions = actions.merge(frozen)
        if result is NO_RESPONSE:
            continue
        call = item.call  # a response part: copies of validated templates, new fields set
        answer = replaced(_RESPONSE, id=call.id, name=call.name, response=result)
        parts.append(replaced(_PART, function_response=answer))
    out: list[Event] = []
    if actions.requested_auth_configs:
        out.append(_credential_event(agent, ctx, actions))
        ctx.end_invocation = True  # the turn waits for the user's sign-in (as google-adk)
    if actions.requested_tool_confirmations:
        out.append(_confirmation_event(agent, ctx, items, actions))
    if parts:
        tracebacks: dict[str | None, str] = {}
        spent = None  # the one call's usage that _child_usage gives, unless several spent
        several = False
        for item in items:  # (a loop: a comprehension is a call of its own)
            if item.traceback:
                tracebacks[item.call.id] = item.traceback
            if item.context.usage_metadata:
                several = spent is not None
                spent = item.context.usage_metadata
        metadata: dict[str, Any] | None = {TRACEBACKS_KEY: tracebacks} if tracebacks else None
        repeats = dedupe_metadata(items) if ctx.run_config.dedupe_tool_calls else None
        if repeats is not None:
            metadata = {**(metadata or {}), **repeats}
        out.append(
            Event(
                author=agent.name,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                content=replaced(_USER_CONTENT, parts=parts),
                actions=actions,
                custom_metadata=metadata,
                usage_metadata=_child_usage(items) if several else spent,
            )
        )
    return out


def _child_usage(items: list[Call]) -> types.GenerateContentResponseUsageMetadata | None:
    """The token usage tools spent on models (AgentTool child runs), summed; else None."""
    spent: list[types.GenerateContentResponseUsageMetadata] = []
    for item in items:  # (a loop: a comprehension is a call of its own)
        if item.context.usage_metadata:
            spent.append(item.context.usage_metadata)
    if not spent:
        return None
    if len(spent) == 1:
        return spent[0]
    total = TokenUsage()
    for metadata in spent:
        total += TokenUsage.of(metadata)
    return usage_metadata(total)


# Validated once; a response part is a copy with new fields (no validation per call).
_USER_CONTENT = types.Content(role="user", parts=[])
_RESPONSE = types.FunctionResponse(name="_", response={})
_PART = types.Part(function_response=_RESPONSE)


def _confirmation_event(
    agent: LlmAgent, ctx: InvocationContext, items: list[Call], actions: EventActions
) -> Event:
    by_id = {item.call.id: item.call for item in items}
    parts: list[types.Part] = []
    ids: set[str] = set()
    for call_id, confirmation in actions.requested_tool_confirmations.items():
        original = by_id.get(call_id)
        if original is None:
            continue
        request_id = new_call_id()
        ids.add(request_id)
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=request_id,
                    name=CONFIRMATION_FUNCTION,
                    args={
                        "originalFunctionCall": original.model_dump(mode="json", exclude_none=True),
                        "toolConfirmation": {
                            "hint": confirmation.hint,
                            "confirmed": confirmation.confirmed,
                            "payload": confirmation.payload,
                        },
                    },
                )
            )
        )
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=parts),
        long_running_tool_ids=frozenset(ids),
    )


def _credential_event(agent: LlmAgent, ctx: InvocationContext, actions: EventActions) -> Event:
    """One ``adk_request_credential`` call per credential asked for (one per credential key)."""
    parts: list[types.Part] = []
    ids: set[str] = set()
    seen: set[Any] = set()
    for call_id, auth_config in actions.requested_auth_configs.items():
        key = auth_config.get("credentialKey") if isinstance(auth_config, dict) else None
        if key is not None and key in seen:
            continue
        seen.add(key)
        request_id = new_call_id()
        ids.add(request_id)
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=request_id,
                    name=CREDENTIAL_FUNCTION,
                    args={"functionCallId": call_id, "authConfig": auth_config},
                )
            )
        )
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="user", parts=parts),
        long_running_tool_ids=frozenset(ids),
    )
