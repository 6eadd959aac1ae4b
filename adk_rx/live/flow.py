"""The live flow of an LlmAgent: the user's live requests and the model's connection, joined.

Two hot streams meet here. In: the :class:`LiveRequestQueue` (contents, blobs, activity
markers, close), forwarded to the model connection in order. Out: the connection's responses,
turned into events. Function calls run as in ``run_async`` (tool callbacks, plugins, errors
back to the model) and their responses go back on the connection; a transfer closes this
agent's connection and opens the target's with its own request. Everything reaches the
Runner through one :class:`~adk_rx.rx.emitter.Emitter`, one event at a time; an interruption
purges the interrupted agent's content chunks still waiting there, so a barged-in answer stops
at once instead of draining stale chunks.

Marble diagram (``c`` a user content, ``t`` text chunks, ``T`` the complete text, ``!`` turn
complete, ``f`` a function call, ``r`` its response, ``|`` close)::

    queue:       -c-----------c----------|
    connection:  --t-t-T-!-----f------t-T-!
    events:      -u-t-t-T-!---u-f-r---t-T-!-|     (u: the user's turn, stored; r sent back)

What is stored (the Runner stores every event that is not partial, before emitting it): the
user's contents, each complete model answer, function calls and responses, finished
transcriptions. Text and audio chunks, and the ``turn_complete`` / ``interrupted`` signals,
are partial: emitted, never stored.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from google.genai import types
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.agents.llm import LlmAgent
from adk_rx.auth.answers import take_answers
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.flows.functions import handle_function_calls
from adk_rx.flows.model_event import model_event
from adk_rx.flows.open_calls import check_answers
from adk_rx.flows.request import build_request
from adk_rx.live.queue import LiveRequest, LiveRequestQueue
from adk_rx.models.live import BaseLlmConnection
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx.emitter import Emitter, from_emitter

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.context import InvocationContext

__all__ = ["run_live_agent"]


def run_live_agent(agent: BaseAgent, ctx: InvocationContext) -> Observable[Event]:
    """The live events of ``agent`` (an LlmAgent) fed by ``ctx.live_request_queue``; cold."""
    queue = ctx.live_request_queue
    if queue is None:
        raise ConfigurationError("run_live needs a LiveRequestQueue")
    if not isinstance(agent, LlmAgent):
        raise ConfigurationError(
            f"agent {agent.name!r} is a {type(agent).__name__}; live sessions run an LlmAgent"
        )

    def start(out: Emitter[Event]) -> None:
        _LiveSession(queue, ctx, out).open(agent)

    return from_emitter(start)


class _LiveSession:
    """One subscription: the agent currently connected and its connection.

    Everything in flight (the queue's and the connection's subscriptions, requests being built,
    tools, sends) is followed by the emitter ``out``, which fails the stream on an error and
    disposes all of it (then closes the connection) when the stream stops.
    """

    def __init__(
        self, queue: LiveRequestQueue, ctx: InvocationContext, out: Emitter[Event]
    ) -> None:
        self.queue = queue
        self.root_ctx = ctx
        self.out = out
        self._lock = threading.Lock()
        self._connection: BaseLlmConnection | None = None
        self._agent: LlmAgent | None = None
        self._ctx = ctx
        self._tools: dict[str, Any] = {}
        self._inputs: abc.DisposableBase = Disposable()  # the queue subscription
        self._outputs: abc.DisposableBase = Disposable()  # the connection's receive()
        out.on_dispose(self._close_connection)

    # -- connecting ---------------------------------------------------------------------------
    def open(self, agent: LlmAgent) -> None:
        """Connects ``agent``'s model with its request, then forwards the queue to it."""
        ctx = self.root_ctx.copy(agent=agent)
        try:
            ctx.increment_llm_call_count()
        except Exception as exc:
            self.out.fail(exc)
            return
        self.out.follow(
            build_request(agent, ctx), lambda request: self._connect(agent, ctx, request)
        )

    def _connect(self, agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
        if self.out.is_stopped:
            return
        _live_config(request, ctx)
        connection = agent.canonical_model.connect(request)
        with self._lock:
            self._agent, self._ctx, self._connection = agent, ctx, connection
            self._tools = dict(request.tools_dict)
        self._outputs = self.out.follow(
            connection.receive(),
            lambda response: self._on_response(connection, response),
            lambda: self._on_closed(connection),
        )
        self.out.follow(connection.send_history(request.contents))
        self._inputs = self.out.follow(
            self.queue.requests(), lambda live_request: self._forward(connection, live_request)
        )

    # -- in: the user's requests --------------------------------------------------------------
    def _forward(self, connection: BaseLlmConnection, request: LiveRequest) -> None:
        if request.close:
            self._inputs.dispose()
            connection.close()  # receive() completes, and with it the flow
            return
        if request.content is not None:
            content = request.content
            if content.role != "user":
                content = content.model_copy(update={"role": "user"})
            try:
                check_answers(self._ctx.session, content)  # as run_async does, before storing
            except ConfigurationError as exc:
                self.out.fail(exc)
                return
            # A credential in an answer stays in memory: never stored, never sent to the model.
            content = take_answers(self._ctx.shared, content)
            self.out.push(self._event("user", content=content))
            self.out.follow(connection.send_content(content))
        elif request.blob is not None:
            self.out.follow(connection.send_realtime(request.blob))
        elif request.activity_start:
            self.out.follow(connection.send_activity_start())
        elif request.activity_end:
            self.out.follow(connection.send_activity_end())

    # -- out: the model's responses -----------------------------------------------------------
    def _on_response(self, connection: BaseLlmConnection, response: LlmResponse) -> None:
        agent = self._agent
        if agent is None or connection is not self._connection or self.out.is_stopped:
            return
        if response.interrupted:
            self.out.purge(lambda event: _is_chunk_of(event, agent.name))
        if response.input_transcription is not None:
            self.out.push(
                self._event(
                    "user",
                    input_transcription=response.input_transcription,
                    partial=None if response.input_transcription.finished else True,
                )
            )
        if response.content is not None and not response.content.parts:
            response = response.replace(content=None)
        # A signal without content is shown, not stored; so is a chunk.
        output = response.output_transcription
        signal_only = response.content is None and (output is None or not output.finished)
        event = model_event(
            response,
            author=agent.name,
            ctx=self._ctx,
            partial=True if (response.partial or signal_only) else None,
        )
        if event is None:
            return
        self.out.push(event)
        calls = event.get_function_calls()
        if calls and not response.partial:
            self._run_tools(connection, agent, calls)

    def _run_tools(
        self, connection: BaseLlmConnection, agent: LlmAgent, calls: list[types.FunctionCall]
    ) -> None:
        def on_event(event: Event) -> None:
            self.out.push(event)
            if event.partial:
                return
            target = event.actions.transfer_to_agent
            if target:  # the target agent's connection takes over; this one is closed
                self._transfer(agent, target)
                return
            responses = event.get_function_responses()
            if responses:
                parts = [types.Part(function_response=r) for r in responses]
                self.out.follow(connection.send_content(types.Content(role="user", parts=parts)))

        self.out.follow(handle_function_calls(agent, self._ctx, calls, self._tools), on_event)

    def _transfer(self, agent: LlmAgent, target_name: str) -> None:
        target = agent.root_agent.find_agent(target_name)
        if not isinstance(target, LlmAgent):
            self.out.fail(ConfigurationError(f"cannot transfer a live session to {target_name!r}"))
            return
        with self._lock:
            old, self._connection = self._connection, None
        self._inputs.dispose()
        self._outputs.dispose()
        if old is not None:
            old.close()
        self.open(target)

    def _on_closed(self, connection: BaseLlmConnection) -> None:
        if connection is self._connection:
            self.out.complete()

    def _close_connection(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _event(self, author: str, **fields: Any) -> Event:
        ctx = self._ctx
        return Event(author=author, invocation_id=ctx.invocation_id, branch=ctx.branch, **fields)


def _is_chunk_of(event: Event, author: str) -> bool:
    """A content chunk of ``author`` still waiting: what an interruption purges. Signals
    (``interrupted``, ``turn_complete``, an error) are never purged, so a subscriber sees every
    turn end."""
    if not event.partial or event.author != author:
        return False
    return not (event.interrupted or event.turn_complete or event.error_code)


def _live_config(request: LlmRequest, ctx: InvocationContext) -> None:
    """Puts the run's live settings on the request (``live_connect_config``)."""
    run = ctx.run_config
    request.live_connect_config = types.LiveConnectConfig(
        response_modalities=[types.Modality(m.upper()) for m in run.response_modalities]
        if run.response_modalities
        else None,
        speech_config=run.speech_config,
        input_audio_transcription=run.input_audio_transcription,
        output_audio_transcription=run.output_audio_transcription,
    )
