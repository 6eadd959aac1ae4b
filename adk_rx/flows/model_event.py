"""The event of one model response: what an LlmAgent's step and its live flow both emit.

A response that says nothing (no content, no error, no interruption, no turn end, no
transcription) makes no event. Function calls without an id get one (``adk-<uuid>``), and the
calls of long-running tools are listed in ``long_running_tool_ids``. Every field the model
reported is carried over. A complete response's usage counts against the invocation's token
and cost budgets. An agent's planner may rewrite the content first
(:func:`~adk_rx.flows.request_layout.planned_content`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from adk_rx.context import ActionsBuilder, InvocationContext
from adk_rx.events import EMPTY_ACTIONS, Event, new_event_id
from adk_rx.flows.light_event import chunk_event
from adk_rx.flows.request_layout import planned_content
from adk_rx.models.aggregation import ensure_function_call_ids
from adk_rx.models.llm_response import LlmResponse

if TYPE_CHECKING:
    from google.genai import types

    from adk_rx.tools.base import BaseTool

__all__ = ["ResponseIds", "model_event"]


class ResponseIds:
    """The event ids of one model call's responses, as in google-adk: streamed chunks share
    theirs with the complete event that follows them; the next response gets a fresh one.

    Attributes:
        value: the id of the next response's event, drawn once something asks for it (None
            until then: a call that answers once draws one id, not two).
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: str | None = None

    def current(self) -> str:
        """The id of the next response's event, which its streamed chunks share."""
        value = self.value
        if value is None:
            value = self.value = new_event_id()
        return value

    def take(self, partial: bool) -> str:
        """The id of the next response's event (``partial``: a streamed chunk)."""
        value = self.value
        if value is None:
            value = new_event_id()
        self.value = value if partial else None
        return value


def _spend(
    ctx: InvocationContext, response: LlmResponse, usage: types.GenerateContentResponseUsageMetadata
) -> None:
    """Adds a complete response's tokens (and cost) to the invocation's budget."""
    model = response.model_version
    if model is None:
        canonical = getattr(ctx.agent, "canonical_model", None)
        model = getattr(canonical, "model", "") or ""
    ctx.shared.budget.add_usage(model, usage)


def model_event(
    response: LlmResponse,
    *,
    author: str,
    ctx: InvocationContext,
    partial: bool | None,
    ids: ResponseIds | None = None,
    actions: ActionsBuilder | None = None,
    tools: Mapping[str, BaseTool] | None = None,
) -> Event | None:
    """The event of ``response``, authored ``author``; None when the response says nothing.

    Args:
        response: the model's response (or streamed chunk).
        author: the agent's name.
        ctx: the agent's context (invocation id and branch).
        partial: the event's ``partial`` (a chunk, or a signal that is shown, not stored).
        ids: the call's response ids; None gives the event a fresh id.
        actions: what callbacks recorded for the event; None for none.
        tools: the request's tools, to mark the calls of long-running ones.
    """
    content = response.content
    planner = getattr(ctx.agent, "planner", None)
    if planner is not None and content is not None:
        content = planned_content(planner, ctx, content)
    if (
        content is None
        and response.error_code is None
        and not response.interrupted
        and not response.turn_complete
        and response.output_transcription is None
    ):
        return None
    has_calls = False
    if content is not None and content.parts:
        for part in content.parts:  # inline: this runs once per streamed chunk
            if part.function_call is not None:
                has_calls = True
                break
    if partial is True and content is not None and not has_calls:
        if ids is None:
            event_id = new_event_id()
        else:  # a chunk shares the id of the response after it
            event_id = ids.current() if response.partial else ids.take(False)
        return chunk_event(  # the common streamed chunk: a light event
            response,
            content,
            id=event_id,
            author=author,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=EMPTY_ACTIONS if actions is None else actions.freeze(),
        )
    long_running: frozenset[str] | None = None
    if has_calls:
        content = ensure_function_call_ids(content)
        assert content is not None and content.parts is not None
        ids_of_long = {
            p.function_call.id
            for p in content.parts
            if p.function_call is not None
            and p.function_call.id
            and tools is not None
            and (tool := tools.get(p.function_call.name or "")) is not None
            and tool.is_long_running
        }
        long_running = frozenset(ids_of_long) if ids_of_long else None
    usage = response.usage_metadata
    if usage is not None and not partial and ctx.shared.budget.tracks_usage:
        _spend(ctx, response, usage)
    return Event(
        id=new_event_id() if ids is None else ids.take(bool(response.partial)),
        author=author,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=content,
        actions=EMPTY_ACTIONS if actions is None else actions.freeze(),
        long_running_tool_ids=long_running,
        partial=partial,
        turn_complete=response.turn_complete,
        error_code=response.error_code,
        error_message=response.error_message,
        finish_reason=response.finish_reason,
        usage_metadata=response.usage_metadata,
        interrupted=response.interrupted,
        output_transcription=response.output_transcription,
        custom_metadata=response.custom_metadata,
        model_version=response.model_version,
        grounding_metadata=response.grounding_metadata,
        citation_metadata=response.citation_metadata,
        avg_logprobs=response.avg_logprobs,
        logprobs_result=response.logprobs_result,
    )
