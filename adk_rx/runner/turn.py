"""Opening a turn: from a :class:`TurnRequest` to the stored user message, stage by stage.

:func:`open_turn` runs these stages on the invocation's :class:`StageChain` (each one is
subscribed once the one before completed; a store that answers at once costs a call, not a
subscription), then hands the opened :class:`Turn` on:

1. the store's turn lock, when the session service has one (other processes' runs on the
   session wait), then the session, read (or created with ``auto_create_session``);
2. the invocation's context on the session, rooted at the app's root agent; a resumed
   invocation takes the id and user message it had;
3. the user message through the plugins' ``on_user_message_callback`` and, with
   ``save_input_blobs_as_artifacts``, its blobs saved as artifacts;
4. answers to calls a crash left open (``dangling.py``), then the user message, stored (not
   emitted) with the request's state delta.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.auth.answers import take_answers
from adk_rx.context import InvocationContext
from adk_rx.errors import SessionNotFoundError
from adk_rx.events import EMPTY_ACTIONS, Event, EventActions
from adk_rx.flows.open_calls import check_answers
from adk_rx.resumability.invocation import resumed_user_content
from adk_rx.resumability.stored import StoredEvents
from adk_rx.runner.dangling import dangling_calls, interrupted_answers
from adk_rx.runner.records import save_input_blobs
from adk_rx.runner.request import TurnRequest
from adk_rx.runner.services import TurnServices
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session
from adk_rx.telemetry.runner_telemetry import NO_TRACE, NoTrace
from adk_rx.telemetry.spans import InvocationTrace

__all__ = ["Turn", "open_turn"]


class Turn:
    """What an invocation opened, for its body and its stop path.

    Attributes:
        ctx: the invocation's root context (None until the session is read).
        writer: the session writer (None until the session is read).
        turn_lock: the store's turn lock, held until the invocation lets go of the session.
        user_stored: the user message is stored: a stop now records where the turn stopped.
    """

    __slots__ = ("ctx", "turn_lock", "user_stored", "writer")

    def __init__(self) -> None:
        self.ctx: InvocationContext | None = None
        self.writer: SessionWriter | None = None
        self.turn_lock: abc.DisposableBase | None = None
        self.user_stored = False


def open_turn(
    chain: StageChain,
    services: TurnServices,
    request: TurnRequest,
    trace: InvocationTrace | NoTrace,
    turn: Turn,
    then: Callable[[], None],
) -> None:
    """Opens ``request``'s turn into ``turn`` (see the stages above), then calls ``then()``.

    A stage that fails goes to the chain's owner; after a stop, no further stage runs.
    """
    _Opening(chain, services, request, trace, turn, then).lock()


class _Opening:
    """The stages of :func:`open_turn`; each hands its result to the next."""

    __slots__ = ("chain", "request", "services", "then", "trace", "turn")

    def __init__(
        self,
        chain: StageChain,
        services: TurnServices,
        request: TurnRequest,
        trace: InvocationTrace | NoTrace,
        turn: Turn,
        then: Callable[[], None],
    ) -> None:
        self.chain = chain
        self.services = services
        self.request = request
        self.trace = trace
        self.turn = turn
        self.then = then

    def lock(self) -> None:
        service = self.services.session_service
        if type(service).lock_session is BaseSessionService.lock_session:
            self.read(None)  # nothing is shared beyond this process: no turn lock
            return
        request = self.request
        self.chain.step(
            lambda: service.lock_session(
                app_name=self.services.app_name,
                user_id=request.user_id,
                session_id=request.session_id,
            ),
            self.read,
        )

    def read(self, turn_lock: abc.DisposableBase | None) -> None:
        # The store's turn lock (held until the invocation releases the session) keeps other
        # processes' runs on this session from interleaving; the session is read only then.
        self.turn.turn_lock = turn_lock
        services, request = self.services, self.request
        try:
            session = services.session_service.get_session(
                app_name=services.app_name, user_id=request.user_id, session_id=request.session_id
            )
        except Exception as exc:
            self.chain.fail(exc)
            return
        self._go_on(session, self.found)

    def _go_on(self, source: Observable[Any], then: Callable[[Any], None]) -> None:
        """``then(source's last item)``: at once when the source is already here (what the
        chain's stage would do, without one), else once the chain's stage completed."""
        chain = self.chain
        if type(source) is not sync.SyncObservable:
            chain.step(lambda: source, then)
            return
        if chain.state is not RunState.RUNNING:
            return
        try:
            values = source.values
            if values is None:
                values = source.items_now()
            if chain.state is RunState.RUNNING:
                then(values[-1] if values else None)
        except Exception as exc:
            chain.fail(exc)

    def found(self, session: Session | None) -> None:
        if session is not None:
            self.open(session)
            return
        services, request = self.services, self.request
        if not request.run_config.auto_create_session:
            raise SessionNotFoundError(
                f"session {request.session_id!r} not found for app {services.app_name!r}, user "
                f"{request.user_id!r}; create it first or pass RunConfig(auto_create_session=True)"
            )
        self.chain.step(
            lambda: services.session_service.create_session(
                app_name=services.app_name, user_id=request.user_id, session_id=request.session_id
            ),
            self.open,
        )

    def open(self, session: Session) -> None:
        services, request, turn = self.services, self.request, self.turn
        run_config = request.run_config
        if services.app.pricing is not None and run_config.pricing is None:
            run_config = run_config.model_copy(update={"pricing": services.app.pricing})
        ctx = InvocationContext(
            session=session,
            agent=services.app.root_agent,
            services=services,
            user_content=request.message,
            run_config=run_config,
            live_request_queue=request.live_queue,
        )
        given = request.message
        answers = False  # the message holds function responses (most messages hold none)
        if given is not None:
            for part in given.parts or ():
                if part.function_response is not None:
                    answers = True
                    break
        if given is not None and answers:
            # Secrets in answers to credential requests stay in this invocation's memory:
            # never in the store, a plugin's view of the message or a span.
            message = take_answers(ctx.shared, given)
            if message is not given:
                ctx.user_content = message
                request = self.request = dataclasses.replace(request, message=message)
        if self.trace is not NO_TRACE:  # (NoTrace.opened gives None, the context's default)
            ctx.trace = self.trace.opened(ctx)
        turn.ctx = ctx
        chain = self.chain
        writer = turn.writer = SessionWriter(services.session_service, session, chain)
        if services.is_resumable:
            stored = writer.stored = StoredEvents()
            ctx.shared.wait_stored = stored.wait
        if request.resume_id is not None:
            ctx.invocation_id = request.resume_id
            ctx.user_content = resumed_user_content(session, request.resume_id)
            if request.message is None:
                self.stored(None)
                return
        if request.message is not None and answers:
            # Before anything is stored: a response that answers no open call would make
            # every later model request of the session fail.
            check_answers(session, request.message)
        if request.state_delta:
            session.state.update(request.state_delta)
        if request.message is None:  # live: no message up front; the queue brings the turns
            self.store_user(None)
            return
        message = None
        if "on_user_message_callback" in services.plugins.hooks or (
            run_config.save_input_blobs_as_artifacts
        ):
            message = _user_message_hooks(services, ctx, request.message)
        if message is None:
            self.store_user(request.message)
            return
        self.chain.step(lambda: message, self.store_user)

    def store_user(self, content: types.Content | None) -> None:
        turn, request = self.turn, self.request
        ctx, writer = turn.ctx, turn.writer
        assert ctx is not None and writer is not None
        dangling = dangling_calls(ctx.session, content)
        if request.resume_id is not None:
            # The resumed invocation's own calls are the resume's to settle (an idempotent
            # tool runs again); only older invocations' calls are answered here.
            dangling = [d for d in dangling if d.event.invocation_id != request.resume_id]
        answers = interrupted_answers(dangling) if dangling else []
        if answers:
            # A crash left stored calls unanswered: answer them ahead of this turn's message,
            # so that no model request carries a call without its response.
            for answer in answers:
                ctx.session.mark_applied(answer)
            persist = writer.persist
            stores = [rx.defer(lambda _, e=answer: persist(e)) for answer in answers]
            self.chain.step(lambda: rx.concat(*stores), lambda _: self.store_message(content))
            return
        self.store_message(content)

    def store_message(self, content: types.Content | None) -> None:
        ctx, writer = self.turn.ctx, self.turn.writer
        assert ctx is not None and writer is not None
        if content is None:  # live: no message up front; the run goes straight to the agent
            self.stored(None)
            return
        ctx.user_content = content
        delta = self.request.state_delta
        event = Event(
            author="user",
            content=content,
            invocation_id=ctx.invocation_id,
            actions=EventActions(state_delta=dict(delta)) if delta else EMPTY_ACTIONS,
        )
        ctx.session.mark_applied(event)
        self._go_on(writer.persist(event), self.stored)

    def stored(self, _: Any) -> None:
        self.turn.user_stored = True
        self.then()


def _user_message_hooks(
    services: TurnServices, ctx: InvocationContext, message: types.Content
) -> Observable[types.Content] | None:
    """The user message as the plugins' ``on_user_message_callback`` replace it and with its
    blobs saved as artifacts (``save_input_blobs_as_artifacts``); None when neither applies."""
    plugins = services.plugins
    has_hook = "on_user_message_callback" in plugins.hooks
    save_blobs = ctx.run_config.save_input_blobs_as_artifacts
    if not has_hook and not save_blobs:
        return None
    found = sync.just(message)
    if has_hook:
        found = plugins.first(
            "on_user_message_callback", invocation_context=ctx, user_message=message
        ).pipe(ops.default_if_empty(message))
    if save_blobs:
        found = found.pipe(
            ops.flat_map(lambda m: save_input_blobs(services.artifact_service, ctx, m))
        )
    return found
