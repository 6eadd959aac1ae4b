"""One subscription of ``Runner.run_async``: its life cycle and its stop path.

:class:`Invocation` owns the subscription's life: it waits for its turn on the session
(:class:`SessionGates`), sets the deadline, opens the turn (``turn.py``), runs the body
(``body.py``) with each event emitted to its subscriber, and, after completion, lets the
app compact the session before the session's next run starts. On a dispose or a deadline it
disposes the body, waits for the append in flight, and writes the records that keep the
session valid before letting the next run on the session start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.scheduler import CurrentThreadScheduler

from adk_rx.compaction import compact_session
from adk_rx.errors import BudgetExceededError, InvocationCancelledError, InvocationTimeoutError
from adk_rx.events import Event
from adk_rx.runner.body import agent_events, before_run_or_agent_events, turn_agent
from adk_rx.runner.gates import Gate, SessionKey
from adk_rx.runner.plain_turn import plain_turn
from adk_rx.runner.request import TurnRequest
from adk_rx.runner.services import TurnServices
from adk_rx.runner.turn import Turn, open_turn
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.telemetry import NO_TRACE

__all__ = ["Invocation"]

_NO_TIMER = Disposable()


def _nothing() -> None:
    pass


class Invocation(Turn, abc.DisposableBase):
    """One subscription to ``Runner.run_async``: ``request`` run with the Runner's
    ``services`` for ``observer``; disposing it cancels the run.

    It is the :class:`Turn` it opens (its context, writer, turn lock): a run waiting on its
    model keeps no object of its own for them.
    """

    def __init__(
        self, services: TurnServices, request: TurnRequest, observer: abc.ObserverBase[Event]
    ) -> None:
        self.services = services
        self.request = request
        self.observer = observer
        self.key: SessionKey = (services.app_name, request.user_id, request.session_id)
        # (Turn's fields, set here: no call)
        self.ctx = None
        self.writer = None
        self.turn_lock = None
        self.user_stored = False
        self.trace = NO_TRACE
        self._chain = StageChain(self)
        self._timer: abc.DisposableBase = _NO_TIMER  # the deadline, when there is one
        self._cancel_wait: Callable[[], None] = _nothing  # (one function for every run)
        self._gate: Gate | None = None
        self._previous: Gate | None = None
        self._closing: InvocationCancelledError | None = None

    # -- life cycle ---------------------------------------------------------------------------
    def start(self, queued: bool = True) -> abc.DisposableBase:
        """Enters the session's queue and starts the run when its turn comes.

        ``queued``: start through the thread's trampoline (see :class:`StartAware`).
        """
        self.trace = self.services.telemetry.start_invocation(
            app_name=self.services.app_name, session_id=self.request.session_id
        )
        previous, self._gate = self.services.gates.enter(self.key)
        self._previous = previous
        if previous is None:
            # Through the thread's trampoline, as stock Rx sources start, when subscribed from
            # inside an operator chain: the chain holds this run's disposable before the first
            # event, so a dispose from inside on_next (``take(k)``) stops even a run that is
            # all synchronous. At the top of a thread the run starts at once; a subscriber on
            # another thread that was handed this invocation (a blocking iterator) may dispose
            # it meanwhile, as it may any run going on another thread.
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

    def _begin(self) -> None:
        if self.services.runs.cancelling:  # its turn came while the Runner cancels its runs
            self.shut_down()
            return
        if not self._chain.begin():
            return
        timeout = self.request.run_config.timeout
        timer = self.services.timer_scheduler
        if timeout is not None and timer is not None:  # a Runner always has a timer scheduler
            self._timer = timer.schedule_relative(timeout, lambda *_: self._stop("TIMEOUT"))
            if not self._chain.is_running:  # stopped on another thread meanwhile
                self._timer.dispose()
        open_turn(self._chain, self.services, self.request, self.trace, self, self._run_body)

    def _run_body(self) -> None:
        services, request = self.services, self.request
        ctx, writer = self.ctx, self.writer
        assert ctx is not None and writer is not None
        chain = self._chain
        if "before_run_callback" in services.plugins.hooks:
            # Each event goes straight to the subscriber: no layer of ours in between.
            chain.step(
                lambda: before_run_or_agent_events(services, request, ctx, writer),
                self._completed,
                self.observer.on_next,
            )
            return
        try:
            agent = turn_agent(services, request, ctx, writer)
        except Exception as exc:
            chain.fail(exc)
            return
        driver = plain_turn(services, request, ctx, writer, agent, chain, self.observer, self)
        if driver is not None:  # a plain LlmAgent: the Runner runs its steps itself
            chain.disposable = driver  # a stop disposes the loop
            driver.run()
            return
        chain.step(
            lambda: agent_events(services, request, ctx, writer, agent),
            self._completed,
            self.observer.on_next,
        )

    def _completed(self, _: Any) -> None:
        if not self._chain.finish():
            return
        if self._timer is not _NO_TIMER:
            self._timer.dispose()
        writer = self.writer
        if writer is not None and writer.by_id:
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
        if self.trace is not NO_TRACE:
            self.trace.end("ok")
        try:
            self.observer.on_completed()
        finally:
            if self.services.app.events_compaction_config is None:
                self._release()
            else:
                self._compact_then_release()

    def _compact_then_release(self) -> None:
        # Compaction runs once the invocation's events are out; the session's next run waits
        # for it, so it sees the summary.
        services, ctx = self.services, self.ctx
        config = services.app.events_compaction_config
        if config is None or ctx is None or services.summarizer is None:
            self._release()
            return
        compact_session(
            ctx.session, services.session_service, config, services.summarizer
        ).subscribe(on_error=lambda _: self._release(), on_completed=self._release)

    def _release(self) -> None:
        assert self._gate is not None
        turn_lock, self.turn_lock = self.turn_lock, None
        if turn_lock is not None:
            turn_lock.dispose()
        self.services.gates.leave(self.key, self._gate)
        self.services.runs.finished(self)

    # -- the stop path ------------------------------------------------------------------------
    def shut_down(self) -> None:
        """Cancels the run because its Runner is closing: like a dispose, and the subscriber
        is told with InvocationCancelledError."""
        self._closing = InvocationCancelledError("the Runner was closed; the run was cancelled")
        self.dispose()

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

    def _fail(self, error: Exception) -> None:
        if not self._chain.stop():
            return
        self._timer.dispose()
        ctx = self.ctx
        cleanup: Observable[Any] = sync.empty()
        if ctx is not None:
            cleanup = self.services.plugins.all(
                "on_run_error_callback", invocation_context=ctx, error=error
            ).pipe(ops.catch(lambda *_: sync.empty()))
        records: list[Event] = []
        if isinstance(error, BudgetExceededError):
            # Ends like a deadline: the open calls answered, the stop recorded with its figures.
            budget = {"limit": error.limit, "allowed": error.allowed, "used": error.used}
            repair = self._repair(
                f"budget exceeded: {error.limit}",
                "BUDGET_EXCEEDED",
                records,
                {"budget": budget},
            )
        else:
            repair = self._repair(f"error: {error}", None)
        cleanup = cleanup.pipe(ops.concat(repair))

        def done(*_: Any) -> None:
            self._chain.settle()
            self._release()
            self.trace.end("error", error)
            for event in records:
                self.observer.on_next(event)
            self.observer.on_error(error)

        cleanup.subscribe(on_error=done, on_completed=done)

    # The plain-turn driver's end (see StepsOwner): its error goes to the stop path as the
    # chain's fail would send it (which, once the chain is over, does nothing, as _fail does).
    steps_done = _completed
    steps_failed = chain_failed = _fail  # (the chain's owner too)

    def _stop(self, code: str) -> None:
        """Cancels the running body (disposal or deadline) and records where it stopped."""
        if not self._chain.stop():
            return
        if self.ctx is not None:
            self.ctx.shared.cancelled = True
        self._timer.dispose()
        self.trace.stopping(code)
        self._chain.dispose()  # the stage or body running now
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
                        f"invocation exceeded RunConfig.timeout={self.request.run_config.timeout}s "
                        "and was cancelled"
                    )
                )
            elif self._closing is not None:
                self.observer.on_error(self._closing)

        self._repair(reason, code, records).subscribe(on_error=done, on_completed=done)

    def _repair(
        self,
        reason: str,
        code: str | None,
        records: list[Event] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Observable[Any]:
        """Waits for the append in flight, then answers open calls and records the stop."""
        if self.writer is None:
            return sync.empty()
        return self.writer.write_stop_records(
            lambda: self.ctx if self.user_stored else None,
            reason,
            code,
            self.services.app.root_agent.name,
            records,
            metadata,
        )
