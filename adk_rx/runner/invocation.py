"""One subscription of ``Runner.run_async``: the apply -> persist -> emit loop and its stop.

:class:`Invocation` owns the subscription's life: it waits for its turn on the session
(:class:`SessionGates`), runs the body, and on cancellation or deadline it disposes the
body, waits for the append in flight, and writes the records that keep the session valid
before letting the next run on the session start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.scheduler import CurrentThreadScheduler

from adk_rx.compaction import compact_session
from adk_rx.context import InvocationContext
from adk_rx.errors import (
    InvocationCancelledError,
    InvocationTimeoutError,
    SessionNotFoundError,
)
from adk_rx.events import EMPTY_ACTIONS, Event, EventActions
from adk_rx.flows.open_calls import check_answers
from adk_rx.resumability.invocation import resumed_user_content
from adk_rx.run_config import RunConfig
from adk_rx.runner.body import agent_events, reply_instead
from adk_rx.runner.dangling import dangling_calls, interrupted_answers
from adk_rx.runner.gates import Gate, SessionGates, SessionKey
from adk_rx.runner.opening import invocation_context, user_message_hooks
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.rx.schedulers import timer_scheduler
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session
from adk_rx.telemetry import NO_TRACE

if TYPE_CHECKING:
    from adk_rx.live.queue import LiveRequestQueue
    from adk_rx.runner.runner import Runner

__all__ = ["Invocation"]

_NO_TIMER = Disposable()


class Invocation(abc.DisposableBase):
    """The state of one subscription to ``Runner.run_async``; disposing it cancels the run."""

    def __init__(
        self,
        runner: Runner,
        observer: abc.ObserverBase[Event],
        *,
        user_id: str,
        session_id: str,
        message: types.Content | None,
        run_config: RunConfig,
        state_delta: dict[str, Any],
        live_queue: LiveRequestQueue | None = None,
        resume_id: str | None = None,
    ) -> None:
        self.runner = runner
        self.observer = observer
        self.user_id = user_id
        self.session_id = session_id
        self.message = message
        self.run_config = run_config
        self.state_delta = state_delta
        self.live_queue = live_queue  # run_live: the user's turns come through this queue
        self.resume_id = resume_id
        self.key: SessionKey = (runner.app_name, user_id, session_id)
        self._chain = StageChain(self._fail)
        self._timer: abc.DisposableBase = _NO_TIMER  # the deadline, when there is one
        self._cancel_wait: Callable[[], None] = lambda: None
        self._gates: Any = None
        self._gate: Gate | None = None
        self.ctx: InvocationContext | None = None
        self._writer: SessionWriter | None = None
        self._user_stored = False
        self._turn_lock: abc.DisposableBase | None = None
        self._previous: Gate | None = None
        self._closing: InvocationCancelledError | None = None
        self.trace = NO_TRACE

    # -- life cycle ---------------------------------------------------------------------------
    def start(self, gates: SessionGates, queued: bool = True) -> abc.DisposableBase:
        """Enters the session's queue and starts the run when its turn comes.

        ``queued``: start through the thread's trampoline (see :class:`StartAware`).
        """
        self._gates = gates
        self.trace = self.runner.telemetry.start_invocation(
            app_name=self.runner.app_name, session_id=self.session_id
        )
        previous, self._gate = gates.enter(self.key)
        self._previous = previous
        if previous is None:
            # Through the thread's trampoline, as stock Rx sources start, when subscribed from
            # inside an operator chain: the chain holds this run's disposable before the first
            # event, so a dispose from inside on_next (``take(k)``) stops even a run that is
            # all synchronous. At the top of a thread nobody can dispose before subscribe()
            # returns anyway: the run starts at once.
            if queued:
                self._begin_queued()
            else:
                self._begin()
        else:
            self._cancel_wait = previous.when_open(self._begin_queued)
        return self

    def _begin_queued(self) -> None:
        # (For a queued run: the previous run opened the gate from deep inside its own
        # completion; the trampoline keeps a long queue of runs from nesting stack frames.)
        CurrentThreadScheduler.singleton().schedule(lambda *_: self._begin())

    def _release(self) -> None:
        assert self._gate is not None
        turn_lock, self._turn_lock = self._turn_lock, None
        if turn_lock is not None:
            turn_lock.dispose()
        self._gates.leave(self.key, self._gate)
        self.runner.runs.finished(self)

    def shut_down(self) -> None:
        """Cancels the run because its Runner is closing: like a dispose, and the subscriber
        is told with InvocationCancelledError."""
        self._closing = InvocationCancelledError("the Runner was closed; the run was cancelled")
        self.dispose()

    def _begin(self) -> None:
        if self.runner.runs.cancelling:  # its turn came while the Runner cancels its runs
            self.shut_down()
            return
        if not self._chain.begin():
            return
        timeout = self.run_config.timeout
        if timeout is not None:
            timer = self.runner.timer_scheduler or timer_scheduler()
            self._timer = timer.schedule_relative(timeout, lambda *_: self._stop("TIMEOUT"))
            if not self._chain.is_running:  # stopped on another thread meanwhile
                self._timer.dispose()
        service = self.runner.session_service
        if type(service).lock_session is BaseSessionService.lock_session:
            self._read_session(None)  # nothing is shared beyond this process: no turn lock
            return
        self._chain.step(
            lambda: service.lock_session(
                app_name=self.runner.app_name, user_id=self.user_id, session_id=self.session_id
            ),
            self._read_session,
        )

    def _read_session(self, turn_lock: abc.DisposableBase | None) -> None:
        # The store's turn lock (held until _release) keeps other processes' runs on this
        # session from interleaving with this one; the session is read only once it is held.
        self._turn_lock = turn_lock
        runner = self.runner
        self._chain.step(
            lambda: runner.session_service.get_session(
                app_name=runner.app_name, user_id=self.user_id, session_id=self.session_id
            ),
            self._found,
        )

    # -- stages: read the session, store the user message, run the agent (see StageChain) --
    def _found(self, session: Session | None) -> None:
        if session is not None:
            self._open(session)
            return
        runner = self.runner
        if not self.run_config.auto_create_session:
            raise SessionNotFoundError(
                f"session {self.session_id!r} not found for app {runner.app_name!r}, user "
                f"{self.user_id!r}; create it first or pass RunConfig(auto_create_session=True)"
            )
        self._chain.step(
            lambda: runner.session_service.create_session(
                app_name=runner.app_name, user_id=self.user_id, session_id=self.session_id
            ),
            self._open,
        )

    def _open(self, session: Session) -> None:
        runner = self.runner
        ctx = invocation_context(runner, session, self.message, self.run_config)
        ctx.trace = self.trace.opened(ctx)
        ctx.live_request_queue = self.live_queue
        self.ctx = ctx
        self._writer = SessionWriter(
            runner.session_service, session, lambda: self._chain.is_running
        )
        if ctx.is_resumable:
            ctx.shared.wait_stored = self._writer.stored.wait
        if self.resume_id is not None:
            ctx.invocation_id = self.resume_id
            ctx.user_content = resumed_user_content(session, self.resume_id)
            if self.message is None:
                self._after_user(None)
                return
        if self.message is not None:
            # Before anything is stored: a response that answers no open call would make
            # every later model request of the session fail.
            check_answers(session, self.message)
        if self.state_delta:
            session.state.update(self.state_delta)
        if self.message is None:  # live: no message up front; the queue brings the turns
            self._store_user(None)
            return
        message = user_message_hooks(runner, ctx, self.message, self.run_config)
        if message is None:
            self._store_user(self.message)
            return
        self._chain.step(lambda: message, self._store_user)

    def _store_user(self, content: types.Content | None) -> None:
        ctx = self.ctx
        assert ctx is not None
        dangling = dangling_calls(ctx.session, content)
        if self.resume_id is not None:
            # The resumed invocation's own calls are the resume's to settle (an idempotent
            # tool runs again); only older invocations' calls are answered here.
            dangling = [d for d in dangling if d.event.invocation_id != self.resume_id]
        answers = interrupted_answers(dangling)
        if answers:
            # A crash left stored calls unanswered: answer them ahead of this turn's message,
            # so that no model request carries a call without its response.
            writer = self._writer_()
            for answer in answers:
                ctx.session.mark_applied(answer)
            stores = [rx.defer(lambda _, e=answer: writer.persist(e)) for answer in answers]
            self._chain.step(lambda: rx.concat(*stores), lambda _: self._store_message(content))
            return
        self._store_message(content)

    def _store_message(self, content: types.Content | None) -> None:
        ctx = self.ctx
        assert ctx is not None
        if content is None:  # live: no message up front; the run goes straight to the agent
            self._after_user(None)
            return
        ctx.user_content = content
        event = Event(
            author="user",
            content=content,
            invocation_id=ctx.invocation_id,
            actions=EventActions(state_delta=dict(self.state_delta))
            if self.state_delta
            else EMPTY_ACTIONS,
        )
        ctx.session.mark_applied(event)
        stored = self._writer_().persist_now(event)
        if isinstance(stored, tuple):
            if stored:
                self._after_user(stored[0])
        else:
            self._chain.step(lambda: stored, self._after_user)

    def _after_user(self, _: Any) -> None:
        self._user_stored = True
        ctx = self.ctx
        plugins = self.runner.plugin_manager
        if plugins.has("before_run_callback"):
            replies = plugins.first("before_run_callback", invocation_context=ctx).pipe(
                ops.to_list(), ops.flat_map(self._run_or_reply)
            )
            self._chain.step(lambda: replies, self._completed, self._emit)
            return
        self._chain.step(self._run_agent, self._completed, self._emit)

    def _completed(self, _: Any) -> None:
        self._complete()

    def dispose(self) -> None:
        state = self._chain.cancel_waiting()
        if state is RunState.WAITING:
            self.trace.end("cancelled")
            self._cancel_wait()
            # Keep the queue order: release this run's turn only once the previous run is done,
            # so the run queued behind this one never overlaps the run still going.
            previous = self._previous
            if previous is None:
                self._release()
            else:
                previous.when_open(self._release)
            if self._closing is not None:
                self.observer.on_error(self._closing)
            return
        if state is RunState.RUNNING:
            self._stop("CANCELLED")

    def _emit(self, event: Event) -> None:
        self.observer.on_next(event)

    def _complete(self) -> None:
        if not self._chain.finish():
            return
        self._timer.dispose()
        if self._writer is not None and self._writer.open_calls:
            # Calls stored without an answer although the run ended normally: a parallel
            # branch disposed by a sibling's escalation. Answer them before letting go.
            self._repair("cancelled", None).subscribe(
                on_error=lambda _: self._finish_completed(),
                on_completed=self._finish_completed,
            )
            return
        self._finish_completed()

    def _finish_completed(self) -> None:
        # Completion is reported before the session's next queued run may start, so
        # subscribers hear about runs in the order the runs happened.
        self.trace.end("ok")
        try:
            self.observer.on_completed()
        finally:
            self._compact_then_release()

    def _compact_then_release(self) -> None:
        # Compaction runs once the invocation's events are out; the session's next run waits
        # for it, so it sees the summary.
        config = self.runner.app.events_compaction_config
        if config is None or self.ctx is None or self.runner.summarizer is None:
            self._release()
            return
        compact_session(
            self.ctx.session, self.runner.session_service, config, self.runner.summarizer
        ).subscribe(on_error=lambda _: self._release(), on_completed=self._release)

    def _fail(self, error: Exception) -> None:
        if not self._chain.stop():
            return
        self._timer.dispose()
        ctx = self.ctx
        cleanup: Observable[Any] = sync.empty()
        if ctx is not None and ctx.plugin_manager is not None:
            cleanup = ctx.plugin_manager.all(
                "on_run_error_callback", invocation_context=ctx, error=error
            ).pipe(ops.catch(lambda *_: sync.empty()))
        cleanup = cleanup.pipe(ops.concat(self._repair(f"error: {error}", None)))

        def done(*_: Any) -> None:
            self._chain.settle()
            self._release()
            self.trace.end("error", error)
            self.observer.on_error(error)

        cleanup.subscribe(on_error=done, on_completed=done)

    def _stop(self, code: str) -> None:
        """Cancels the running body (disposal or deadline) and records where it stopped."""
        if not self._chain.stop():
            return
        if self.ctx is not None:
            self.ctx.shared.cancelled.set()
        self._timer.dispose()
        self.trace.stopping(code)
        self._chain.body.dispose()
        reason = "cancelled" if code == "CANCELLED" else "timeout"
        records: list[Event] = []

        def done(*_: Any) -> None:
            self._chain.settle()
            self._release()
            self.trace.end(code.lower())
            if code == "TIMEOUT":
                for event in records:
                    self.observer.on_next(event)
                self.observer.on_error(
                    InvocationTimeoutError(
                        f"invocation exceeded RunConfig.timeout={self.run_config.timeout}s "
                        "and was cancelled"
                    )
                )
            elif self._closing is not None:
                self.observer.on_error(self._closing)

        self._repair(reason, code, records).subscribe(on_error=done, on_completed=done)

    # -- the body -----------------------------------------------------------------------------
    def _run_or_reply(self, found: list[Any]) -> Observable[Event]:
        if not found:
            return self._run_agent()
        assert self.ctx is not None
        return reply_instead(self.ctx, self._writer_(), found[0])

    def _run_agent(self) -> Observable[Event]:
        assert self.ctx is not None
        return agent_events(
            self.runner,
            self.ctx,
            self._writer_(),
            resume_id=self.resume_id,
            live=self.live_queue is not None,
        )

    def _writer_(self) -> SessionWriter:
        assert self._writer is not None, "the session is open"
        return self._writer

    def _repair(
        self, reason: str, code: str | None, records: list[Event] | None = None
    ) -> Observable[Any]:
        """Waits for the append in flight, then answers open calls and records the stop."""
        if self._writer is None:
            return sync.empty()
        return self._writer.write_stop_records(
            lambda: self.ctx if self._user_stored else None,
            reason,
            code,
            self.runner.agent.name,
            records,
        )
