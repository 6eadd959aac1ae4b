"""One step of the LLM loop: build the request, call the model, handle what it asked for.

A step emits the events of one model call: the model's event(s) (streamed chunks first, when
streaming), then, if it called functions, an optional confirmation request and the merged
function-response event, then, if an event asks for a transfer, the whole run of the target
agent. Callbacks run around the model call: before-model (a response replaces the call),
on-model-error (a response recovers), after-model (a response replaces each one).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.auth.resume import resume_credentials
from adk_rx.callbacks import callback_chain, has_callbacks
from adk_rx.context import ActionsBuilder, CallbackContext, InvocationContext
from adk_rx.errors import AdkRxError, AgentNotFoundError, CallbackError, ModelError
from adk_rx.events import Event
from adk_rx.flows.code_execution import code_events
from adk_rx.flows.confirmation import resume_confirmations
from adk_rx.flows.functions import handle_function_calls
from adk_rx.flows.light_event import CallChunks
from adk_rx.flows.model_event import ResponseIds, model_event
from adk_rx.flows.request import build_request
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.run_config import StreamingMode
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.generator_stage import Steps, from_generator
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import SyncObservable

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

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
        ended = yield built.pipe(concat_map_direct(lambda req: _call_model(agent, ctx, req)))
        return ended or last
    request = (built.values or built.items_now())[0]
    ctx.increment_llm_call_count()
    answered = _answer(agent, ctx, request)
    if type(answered) is not SyncObservable:
        # A step waiting on its model keeps neither the request's builder nor the model's
        # Observable (subscribed by then): the call is yielded from a list, not a local.
        call = [_call_model_counted(agent, ctx, request, answered)]
        del built, answered
        return (yield call.pop()) or last
    responses = answered.values
    if responses is None:
        responses = answered.items_now()
    cc = CallbackContext(ctx)
    tools = request.tools_dict
    ids = ResponseIds()
    chunks = None
    if ctx.run_config.streaming_mode is not StreamingMode.NONE:
        chunks = _call_chunks(agent, ctx, ids, cc)
    index, end = 0, len(responses)
    while index < end:
        if chunks is not None:  # a run of plain streamed chunks: made in one call, one yield
            streamed, index = chunks.run_of(responses, index)
            if streamed:
                last = yield SyncObservable(streamed)
                if index == end:
                    break
        response = responses[index]
        index += 1
        event = model_event(
            response,
            author=agent.name,
            ctx=ctx,
            partial=response.partial,
            ids=ids,
            actions=cc.actions,
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
        last = yield from _event_and_calls(agent, ctx, tools, event)
    return last


def _call_chunks(
    agent: LlmAgent, ctx: InvocationContext, ids: ResponseIds, cc: CallbackContext
) -> CallChunks | None:
    """What makes the events of a streamed call's plain chunks, each as one call; None
    when a planner rewrites their content (``model_event`` makes each one then).

    Only where no model callback runs: the chunks share the actions frozen now."""
    if getattr(agent, "planner", None) is not None:
        return None
    return CallChunks(ids, agent.name, ctx.invocation_id, ctx.branch, cc.actions.freeze())


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


def _event_and_calls(
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
    calls = event.get_function_calls()
    if not calls:
        return last
    wait_stored = ctx.shared.wait_stored
    if wait_stored is not None:  # resumable: tools start once their call is durable
        yield wait_stored(event.id)
    answered = handle_function_calls(agent, ctx, calls, tools)
    if type(answered) is not SyncObservable:

        def then_transfer(e: Event) -> Observable[Event]:
            return _then_transfer(agent, ctx, e)

        return (yield answered.pipe(concat_map_direct(then_transfer))) or last
    for response in answered.items_now():
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


def _call_model(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> Observable[Event]:
    try:
        ctx.increment_llm_call_count()
    except AdkRxError as exc:
        return rx.throw(exc)
    return _call_model_counted(agent, ctx, request)


def _call_model_counted(
    agent: LlmAgent,
    ctx: InvocationContext,
    request: LlmRequest,
    answered: Observable[LlmResponse] | None = None,
) -> Observable[Event]:
    """The model call and what follows it; ``answered``: the call, when already running."""
    plugins = ctx.services.plugins
    # A call already answered was made only because no model callback wraps it (_answer).
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
    call = _ModelCall(agent, ctx, request)
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
        chunks = _call_chunks(agent, ctx, call, call.cc())
    return concat_map_direct(
        call,
        direct=None if chunks is None else chunks.of,
        map_error=call.model_error if plain else None,
    )(responses)


class _ModelCall(ResponseIds):
    """One model call's state, for as long as its answer is awaited: the response ids it
    gives out, and (called with each response) its post-processing.

    One slotted object, not closures; its CallbackContext is made only when a callback
    or a streamed chunk needs one (otherwise nothing can write to its actions).
    """

    __slots__ = ("_cc", "agent", "ctx", "request", "tools")

    def __init__(self, agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
        super().__init__()
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
        """The model's failure as the step reports it (a ModelError, unless adk_rx's own)."""
        if isinstance(exc, AdkRxError):
            return exc
        agent = self.agent
        wrapped = ModelError(
            f"model {agent.canonical_model.model!r} of agent {agent.name!r} failed: "
            f"{type(exc).__name__}: {exc}"
        )
        wrapped.__cause__ = exc
        return wrapped

    def recover(self, exc: Exception) -> Observable[LlmResponse]:
        """The model's error, through the on-model-error callbacks."""
        return _on_model_error(self, exc, self.model_error(exc))

    def __call__(self, response: LlmResponse) -> Observable[Event]:
        actions = None if self._cc is None else self._cc.actions
        return _postprocess(self.agent, self.ctx, actions, self.tools, response, self)


def _check_response(hook: str) -> Any:
    def check(value: Any) -> LlmResponse:
        if not isinstance(value, LlmResponse):
            raise CallbackError(
                f"{hook} must return LlmResponse or None, got {type(value).__name__}"
            )
        return value

    return check


def _on_model_error(call: _ModelCall, exc: Exception, error: Exception) -> Observable[LlmResponse]:
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
    return from_generator(lambda: _event_and_calls(agent, ctx, tools, event))


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
