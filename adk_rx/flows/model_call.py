"""A model call and what follows each of its responses.

:class:`ModelCall` is one call's state while its answer is awaited: the response ids it gives
out, the model callbacks around the call (before-model: a response replaces the call;
on-model-error: a response recovers; after-model: a response replaces each one), and the
post-processing of each response: its event, then its function calls' events, then the run
of an agent it transfers to (:func:`event_and_calls`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.callbacks import callback_chain, has_callbacks
from adk_rx.context import ActionsBuilder, CallbackContext, InvocationContext
from adk_rx.errors import AdkRxError, AgentNotFoundError, CallbackError, ModelError
from adk_rx.events import Event, EventActions
from adk_rx.flows.code_execution import code_events
from adk_rx.flows.functions import call_events, call_items, handle_calls
from adk_rx.flows.light_event import CallChunks
from adk_rx.flows.model_event import ResponseIds, model_event
from adk_rx.flows.tool_call import run_call
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.run_config import StreamingMode
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.blocking import Blocking
from adk_rx.rx._engine.collected import each_of
from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.generator_stage import Steps, from_generator
from adk_rx.rx._engine.sync import SyncObservable

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

__all__ = [
    "ModelCall",
    "call_chunks",
    "call_model",
    "call_model_counted",
    "event_and_calls",
    "model_error",
]


def call_chunks(
    agent: LlmAgent, ctx: InvocationContext, ids: ResponseIds, actions: EventActions
) -> CallChunks | None:
    """What makes the events of a streamed call's plain chunks, each as one call; None
    when a planner rewrites their content (``model_event`` makes each one then).

    Only where no model callback runs: the chunks share ``actions`` (frozen now)."""
    if getattr(agent, "planner", None) is not None:
        return None
    return CallChunks(ids, agent.name, ctx.invocation_id, ctx.branch, actions)


def event_and_calls(
    agent: LlmAgent, ctx: InvocationContext, tools: dict[str, BaseTool], event: Event
) -> Steps[Event]:
    """The model's event, then its calls' events, each followed by the run of the agent it
    transfers to; returns the last event."""
    yield SyncObservable((event,))
    if event.partial:
        return event  # a partial function call is never executed
    last = event
    if event.actions.transfer_to_agent:
        last = (yield _transfer(agent, ctx, event.actions.transfer_to_agent)) or last
    content = event.content
    calls = None
    for part in (content.parts or ()) if content is not None else ():  # (no call for a text)
        if part.function_call is not None:
            calls = event.get_function_calls()
            break
    if not calls:
        return last
    wait_stored = ctx.shared.wait_stored
    if wait_stored is not None:  # resumable: tools start once their call is durable
        yield wait_stored(event.id)
    items = call_items(ctx, calls, tools)
    if len(items) == 1 and (items[0].tool is None or not items[0].tool.reports_progress):
        item = items[0]  # one call, no progress events: its events are made as plain calls
        answered = run_call(agent, ctx, item)
        if type(answered) is not SyncObservable:  # on the tool's thread, once it answers

            def events(result: Any) -> list[Event]:
                return call_events(agent, ctx, item, result)

            # (a call on a pool makes the events in its job, with no layer of its own)
            waiting = [
                answered.each_of(events)
                if type(answered) is Blocking
                else each_of(answered, events)
            ]
            del answered  # (a waiting step keeps no Observable it subscribed)
            response = yield waiting.pop()
            if response is None:
                return last
            if response.actions.transfer_to_agent:  # (only the merged response may ask)
                return (yield _transfer(agent, ctx, response.actions.transfer_to_agent)) or response
            return response
        responses = []
        results = answered.values  # (set for a plain call's answer)
        for result in results if results is not None else answered.items_now():
            responses += call_events(agent, ctx, item, result)
    else:
        answered = handle_calls(agent, ctx, items)
        if type(answered) is not SyncObservable:

            def then_transfer(e: Event) -> Observable[Event]:
                return _then_transfer(agent, ctx, e)

            return (yield answered.pipe(concat_map_direct(then_transfer))) or last
        responses = answered.items_now()
    for response in responses:
        yield SyncObservable((response,))
        last = response
        if response.actions.transfer_to_agent:
            last = (yield _transfer(agent, ctx, response.actions.transfer_to_agent)) or last
    return last


def _then_transfer(agent: LlmAgent, ctx: InvocationContext, event: Event) -> Observable[Event]:
    """The event, then the run of the agent it transfers to (if it asks for one)."""
    target_name = event.actions.transfer_to_agent
    if not target_name or event.partial:
        return SyncObservable((event,))

    def steps() -> Steps[Event]:
        yield SyncObservable((event,))
        return (yield _transfer(agent, ctx, target_name))

    return from_generator(steps)


def call_model(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> Observable[Event]:
    """The model call (counted against the run's budget first) and what follows it."""
    try:
        ctx.increment_llm_call_count()
    except AdkRxError as exc:
        return rx.throw(exc)
    return call_model_counted(agent, ctx, request)


def call_model_counted(
    agent: LlmAgent,
    ctx: InvocationContext,
    request: LlmRequest,
    answered: Observable[LlmResponse] | None = None,
) -> Observable[Event]:
    """The model call and what follows it; ``answered``: the call, when already running."""
    plugins = ctx.services.plugins
    # A call already answered was made only because no model callback wraps it (the
    # step's _answer).
    has_before = answered is None and has_callbacks(
        plugins, "before_model_callback", agent.before_model_callback
    )
    has_after = answered is None and has_callbacks(
        plugins, "after_model_callback", agent.after_model_callback
    )
    has_on_error = has_callbacks(plugins, "on_model_error_callback", agent.on_model_error_callback)
    # With no model callback at all, the model's error only needs wrapping: the last stage
    # does it as it passes the error on (no recovery stage around the call).
    plain = not (has_before or has_after or has_on_error)
    call = ModelCall(agent, ctx, request)
    if has_before:
        cc = call.cc()
        responses = callback_chain(
            plugins,
            "before_model_callback",
            agent.before_model_callback,
            (cc, request),
            callback_context=cc,
            llm_request=request,
        ).pipe(
            ops.map(_check_response("before_model_callback")),
            ops.to_list(),
            ops.flat_map(
                lambda found: sync.just(found[0]) if found else call.responses(answered, has_after)
            ),
        )
    else:
        responses = call.responses(answered, has_after, recover=not plain)
    chunks = None
    if plain and ctx.run_config.streaming_mode is not StreamingMode.NONE:
        chunks = call_chunks(agent, ctx, call, call.cc().actions.freeze())
    return concat_map_direct(
        call,
        direct=None if chunks is None else chunks.of,
        map_error=call.model_error if plain else None,
    )(responses)


class ModelCall(ResponseIds):
    """One model call's state, for as long as its answer is awaited: the response ids it
    gives out, and (called with each response) its post-processing.

    One slotted object, not closures; its CallbackContext is made only when a callback
    or a streamed chunk needs one (otherwise nothing can write to its actions).
    """

    __slots__ = ("_cc", "agent", "ctx", "request", "tools")

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self, agent: LlmAgent, ctx: InvocationContext, request: LlmRequest
    ) -> None:
        self.value = None  # (ResponseIds' state, set here: one call less)
        self.agent = agent
        self.ctx = ctx
        self.request = request
        self.tools = request.tools_dict
        self._cc: CallbackContext | None = None

    def cc(self) -> CallbackContext:
        """The call's callback context (made on first use)."""
        cc = self._cc
        if cc is None:
            cc = self._cc = CallbackContext(self.ctx)
        return cc

    def responses(
        self, answered: Observable[LlmResponse] | None, has_after: bool, recover: bool = True
    ) -> Observable[LlmResponse]:
        """The model's answer (``answered``, or a new call), with the error (when
        ``recover``) and after-model callbacks around it."""
        agent, ctx, request = self.agent, self.ctx, self.request
        trace = ctx.trace
        if trace is None:
            responses = self.generate() if answered is None else answered
        else:
            responses = trace.call_llm(
                agent, request, self.generate if answered is None else lambda: answered
            )
        if recover:
            responses = sync.resume_on_error(self.recover)(responses)
        if has_after:
            responses = responses.pipe(
                ops.concat_map(lambda r: _after_model(agent, ctx, self.cc(), r))
            )
        return responses

    def generate(self) -> Observable[LlmResponse]:
        """Calls the model (when the step runs: no defer needed)."""
        stream = self.ctx.run_config.streaming_mode is not StreamingMode.NONE
        try:
            return self.agent.canonical_model.generate_content(self.request, stream=stream)
        except Exception as exc:
            return rx.throw(exc)

    def model_error(self, exc: Exception) -> Exception:
        """The model's failure as the step reports it (see :func:`model_error`)."""
        return model_error(self.agent, exc)

    def recover(self, exc: Exception) -> Observable[LlmResponse]:
        """The model's error, through the on-model-error callbacks."""
        return _on_model_error(self, exc, self.model_error(exc))

    def __call__(self, response: LlmResponse) -> Observable[Event]:
        actions = None if self._cc is None else self._cc.actions
        return _postprocess(self.agent, self.ctx, actions, self.tools, response, self)


def model_error(agent: LlmAgent, exc: Exception) -> Exception:
    """The model's failure as the step reports it (a ModelError, unless adk_rx's own)."""
    if isinstance(exc, AdkRxError):
        return exc
    wrapped = ModelError(
        f"model {agent.canonical_model.model!r} of agent {agent.name!r} failed: "
        f"{type(exc).__name__}: {exc}"
    )
    wrapped.__cause__ = exc
    return wrapped


def _check_response(hook: str) -> Any:
    def check(value: Any) -> LlmResponse:
        if not isinstance(value, LlmResponse):
            raise CallbackError(
                f"{hook} must return LlmResponse or None, got {type(value).__name__}"
            )
        return value

    return check


def _on_model_error(call: ModelCall, exc: Exception, error: Exception) -> Observable[LlmResponse]:
    agent, ctx, request = call.agent, call.ctx, call.request
    plugins = ctx.services.plugins
    if not has_callbacks(plugins, "on_model_error_callback", agent.on_model_error_callback):
        return rx.throw(error)
    cc = call.cc()
    return callback_chain(
        plugins,
        "on_model_error_callback",
        agent.on_model_error_callback,
        (cc, request, exc),
        callback_context=cc,
        llm_request=request,
        error=exc,
    ).pipe(
        ops.map(_check_response("on_model_error_callback")),
        ops.to_list(),
        ops.flat_map(lambda found: sync.just(found[0]) if found else rx.throw(error)),
    )


def _after_model(
    agent: LlmAgent, ctx: InvocationContext, cc: CallbackContext, response: LlmResponse
) -> Observable[LlmResponse]:
    check = _check_response("after_model_callback")

    def checked(value: Any) -> LlmResponse:
        replacement = check(value)
        if response.partial and not replacement.partial:
            # A replacement of a streamed chunk stays a chunk: only the aggregate is stored.
            return dataclasses.replace(replacement, partial=True)
        return replacement

    return callback_chain(
        ctx.services.plugins,
        "after_model_callback",
        agent.after_model_callback,
        (cc, response),
        callback_context=cc,
        llm_response=response,
    ).pipe(ops.map(checked), ops.default_if_empty(response))


def _postprocess(
    agent: LlmAgent,
    ctx: InvocationContext,
    actions: ActionsBuilder | None,
    tools: dict[str, BaseTool],
    response: LlmResponse,
    ids: ResponseIds,
) -> Observable[Event]:
    """The response's event, then its function calls' events, then a transfer's run.

    A streamed chunk (and any event that neither calls a function nor transfers) needs no
    further work and is returned as a SyncObservable, so a stream subscribes nothing per chunk.
    """
    event = model_event(
        response,
        author=agent.name,
        ctx=ctx,
        partial=response.partial,
        ids=ids,
        actions=actions,
        tools=tools,
    )
    if event is None:
        return sync.empty()
    if event.partial:
        return SyncObservable((event,))  # a partial function call is never executed
    if agent.code_executor is not None and (run := code_events(agent, ctx, event)):
        return from_generator(lambda: run)
    calls = event.get_function_calls()
    if not calls and not event.actions.transfer_to_agent:
        return SyncObservable((event,))
    return from_generator(lambda: event_and_calls(agent, ctx, tools, event))


def _transfer(agent: LlmAgent, ctx: InvocationContext, target_name: str) -> Observable[Event]:
    """The run of the agent ``target_name`` (nothing once the invocation is cancelled)."""
    target = agent.root_agent.find_agent(target_name)
    if target is None:
        return rx.throw(
            AgentNotFoundError(
                f"agent {agent.name!r} asked to transfer to {target_name!r}, which is not in "
                f"the agent tree rooted at {agent.root_agent.name!r}"
            )
        )
    if ctx.cancelled:
        return sync.empty()
    return target.run_async(ctx)
