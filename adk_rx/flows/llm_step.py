"""One step of the LLM loop: build the request, call the model, handle what it asked for.

A step emits the events of one model call: the model's event(s) (streamed chunks first, when
streaming), then, if it called functions, an optional confirmation request and the merged
function-response event, then, if an event asks for a transfer, the whole run of the target
agent. The model call with callbacks or a span around it, or answering later, and what
follows each of its responses, is :mod:`adk_rx.flows.model_call`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import reactivex as rx
from reactivex import Observable

from adk_rx.auth.resume import resume_credentials
from adk_rx.context import InvocationContext
from adk_rx.events import EMPTY_ACTIONS, Event
from adk_rx.flows.code_execution import code_events
from adk_rx.flows.confirmation import resume_confirmations
from adk_rx.flows.model_call import (
    call_chunks,
    call_model,
    call_model_counted,
    event_and_calls,
    model_error,
)
from adk_rx.flows.model_event import ResponseIds, model_event
from adk_rx.flows.request import build_request
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.run_config import StreamingMode
from adk_rx.rx._engine.collected import collected
from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.generator_stage import Steps
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import SyncObservable

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["step_events"]


def step_events(agent: LlmAgent, ctx: InvocationContext) -> Steps[Event]:
    """One step as a generator (see :func:`adk_rx.rx._engine.generator_stage.from_generator`).

    Returns the step's last event. While the request is built at once, the model answers as
    it is subscribed and no model callback or span is around the call, the step runs as
    plain calls; otherwise the model call and what follows it are an Observable, yielded in
    place.
    """
    last: Event | None = None
    events = ctx.session.events
    answers = False  # the session ends with a user message that answers a call (rarely)
    if events and events[-1].author == "user" and (content := events[-1].content) is not None:
        for part in content.parts or ():
            if part.function_response is not None:
                answers = True
                break
    if answers:
        confirmed = resume_confirmations(agent, ctx)
        if confirmed is not None:
            last = yield confirmed
        signed_in = resume_credentials(agent, ctx)
        if signed_in is not None:
            last = (yield signed_in) or last
    if ctx.end_invocation or ctx.shared.cancelled:
        return last
    built = build_request(agent, ctx)
    if type(built) is not SyncObservable:
        ended = yield built.pipe(concat_map_direct(_model_calls(agent, ctx)))
        return ended or last
    request = (built.values or built.items_now())[0]
    ctx.shared.budget.count_llm_call()  # (ctx.increment_llm_call_count(), inline)
    answered = _answer(agent, ctx, request)
    failed: Exception | None = None
    if type(answered) is SyncObservable:
        responses = answered.values
        if responses is None:
            responses = answered.items_now()
        tools = request.tools_dict
    elif (
        answered is None
        # The answer is waited for whole unless each chunk is emitted as it comes, or an
        # on-model-error callback may recover (plain reads, no call per model call).
        or ctx.run_config.streaming_mode is not StreamingMode.NONE
        or agent.on_model_error_callback
        or (
            (plugins := ctx.services.plugins) is not None
            and "on_model_error_callback" in plugins.hooks
        )
    ):
        # A step waiting on its model keeps neither the request's builder nor the model's
        # Observable (subscribed by then): the call is yielded from a list, not a local.
        call = [call_model_counted(agent, ctx, request, answered)]
        del built, answered
        return (yield call.pop()) or last
    else:
        # The answer comes later and nothing but the step handles it: the step waits for
        # its end and goes on as plain calls, as with an answer here at once. (A response
        # before a failure is handled first, then the failure raised.) It waits without the
        # request either: only the request's tools are read after the answer.
        into: list[LlmResponse] = []
        waiting = [collected(answered, into)]
        tools = request.tools_dict
        del built, answered, request
        try:
            yield waiting.pop()
        except Exception as exc:
            failed = model_error(agent, exc)
        responses = into
    # No model callback ran and none will: nothing records actions for these events (they
    # get the shared empty ones), and an answer of one response needs no shared response id.
    index, end = 0, len(responses)
    chunks = None
    ids: ResponseIds | None = None
    if ctx.run_config.streaming_mode is not StreamingMode.NONE:
        ids = ResponseIds()
        chunks = call_chunks(agent, ctx, ids, EMPTY_ACTIONS)
    elif end > 1:
        ids = ResponseIds()
    while index < end:
        if chunks is not None:  # a run of plain streamed chunks: made in one call, one yield
            streamed, index = chunks.run_of(responses, index)
            if streamed:
                last = yield SyncObservable(streamed)
                continue  # the next run, or the response that ended this one
        response = responses[index]
        index += 1
        event = model_event(
            response,
            author=agent.name,
            ctx=ctx,
            partial=response.partial,
            ids=ids,
            tools=tools,
        )
        if event is None:
            continue
        if event.partial:  # a partial call, or a chunk a planner rewrote: emitted as it is
            yield SyncObservable((event,))
            last = event
            continue
        if agent.code_executor is not None and (run := code_events(agent, ctx, event)):
            last = yield from run
            continue
        content = event.content
        calls = False
        for part in (content.parts or ()) if content is not None else ():
            if part.function_call is not None:
                calls = True
                break
        if not calls and not event.actions.transfer_to_agent:
            # (What event_and_calls does with an event that calls nothing, inline: the most
            # common step's end.)
            yield SyncObservable((event,))
            last = event
            continue
        last = yield from event_and_calls(agent, ctx, tools, event)
    if failed is not None:
        raise failed
    return last


def _model_calls(
    agent: LlmAgent, ctx: InvocationContext
) -> Callable[[LlmRequest], Observable[Event]]:
    """The model call of each built request (a function of its own: a closure made inside
    the step would make its generator keep ``agent`` and ``ctx`` in cells for as long as it
    waits)."""
    return lambda request: call_model(agent, ctx, request)


def _answer(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest
) -> Observable[LlmResponse] | None:
    """The model's answer, subscribed now when nothing wraps the call (else None).

    A model that answers while subscribed gives a SyncObservable and the step goes on as
    plain calls; any other answer is already running and is continued by the Rx path.
    """
    plugins = ctx.services.plugins
    if (
        ctx.trace is not None
        or agent.before_model_callback
        or agent.after_model_callback
        or (
            plugins is not None
            and (
                "before_model_callback" in plugins.hooks or "after_model_callback" in plugins.hooks
            )
        )
    ):
        return None  # (has_callbacks, without a call per hook)
    stream = ctx.run_config.streaming_mode is not StreamingMode.NONE
    try:
        model = agent._resolved_model or agent.canonical_model  # pyright: ignore[reportPrivateUsage]
        return settle(model.generate_content(request, stream=stream))
    except Exception as exc:
        return rx.throw(exc)
