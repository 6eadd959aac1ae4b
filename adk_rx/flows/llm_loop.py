"""The LLM loop: steps of preprocess -> call the model -> postprocess -> run functions.

    run_llm_flow:  step 1 events ... | step 2 events ... | ... (lazy; next step only after)

A step ends with the events of one model call: the model's event(s), then (if it called
functions) an optional confirmation request and the merged function-response event, then,
if an event asks for a transfer, the whole run of the target agent. The loop goes on while
the step's last event is not a final response; the next step is subscribed only after the
previous one completed, so it sees every event of the previous step applied to the session.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from reactivex import Observable, abc
from reactivex.disposable import SerialDisposable

from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.flows.llm_step import one_step
from adk_rx.rx import sync

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["run_llm_flow"]


def run_llm_flow(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event]:
    """The agent's steps until a final response, ``end_of_agent`` or ``max_steps``."""

    def subscribe(
        observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return _Steps(agent, ctx, observer, scheduler).start()

    return Observable(subscribe)


class _Steps:
    """One subscription of the loop: subscribes step after step, each after the last ended.

    Written out instead of ``concat_with_iterable`` + ``do_action`` so that a streamed chunk
    crosses one layer here, not three. A step that completes synchronously inside its own
    subscribe() lets the loop below go on, so long runs do not grow the stack.
    """

    __slots__ = (
        "agent",
        "ctx",
        "current",
        "last",
        "lock",
        "observer",
        "resume",
        "scheduler",
        "taken",
    )

    def __init__(
        self,
        agent: LlmAgent,
        ctx: InvocationContext,
        observer: abc.ObserverBase[Event],
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self.agent = agent
        self.ctx = ctx
        self.observer = observer
        self.scheduler = scheduler
        self.lock = threading.Lock()
        self.current = SerialDisposable()
        self.taken = 0
        self.last: Event | None = None
        self.resume = False  # set by a step that completed after its subscribe() returned

    def start(self) -> abc.DisposableBase:
        self._run()
        return self.current

    def on_next(self, event: Event) -> None:
        self.last = event
        self.observer.on_next(event)

    def _run(self) -> None:
        while not self.current.is_disposed:
            self.last = None
            try:
                step = one_step(self.agent, self.ctx)
            except Exception as exc:
                self.observer.on_error(exc)
                return
            state = [False, False]  # [completed, subscribe() returned]

            def completed(state: list[bool] = state) -> None:
                with self.lock:
                    state[0] = True
                    later = state[1]
                if later:
                    self._next()

            # Inside this loop's own (guarded) subscription: no extra wrapper per step.
            sync.subscribe_inner(
                step,
                self.on_next,
                self.observer.on_error,
                completed,
                self.scheduler,
                into=self.current,
            )
            with self.lock:
                state[1] = True
                if not state[0]:
                    return  # the step goes on asynchronously; its completion calls _next
            if self._finished():
                return

    def _next(self) -> None:
        if not self._finished():
            self._run()

    def _finished(self) -> bool:
        """Decides after a step; completes the loop when it is over."""
        self.taken += 1
        last = self.last
        ctx = self.ctx
        max_steps = self.agent.max_steps
        if (
            last is None
            or last.is_final_response()
            or last.actions.end_of_agent
            or ctx.end_invocation
            or ctx.cancelled
            or (max_steps is not None and self.taken >= max_steps)
        ):
            if not self.current.is_disposed:
                self.observer.on_completed()
            return True
        return False
