"""LoopAgent: repeats its sub-agents until one escalates or the iterations run out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.in_order import run_in_order
from adk_rx.context import InvocationContext
from adk_rx.errors import InvalidAgentError
from adk_rx.events import Event

if TYPE_CHECKING:
    from adk_rx.callback_types import AfterAgentCallback, BeforeAgentCallback, Callbacks

__all__ = ["LoopAgent"]


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again.

    Stops after the first event that escalates (that event is emitted, nothing after it) or
    after ``max_iterations`` rounds. The exit is scoped: the loop consumes the escalation of
    its own subtree (``exit_loop``, or any agent's ``escalate``), so an enclosing LoopAgent
    (or ParallelAgent) sees the event and goes on. Without a limit it loops lazily, for as
    long as the subscriber keeps taking events. A sub-agent's own early end (a before-agent
    callback's content) ends that sub-agent's turn only, not the loop. Disposing the subscription
    (which a cancelled invocation does) starts no further sub-agent, and neither does a
    pending long-running call. In a resumable app it records the sub-agent and round it runs
    (``agent_state``); a resumed invocation continues there.

    Marble diagram::

        max_iterations=2, sub_agents [a, b]:   --a1--b1--a2--b2--|
        b escalates in round 1:               --a1--b1(esc)|
        no limit, take(3):                    --a1--b1--a2|     (b is never started again)

        outer [inner [a], b], a escalates:    --a1(esc)--b1--a1(esc)--b1--...  (outer goes on)

    Args:
        max_iterations: rounds to run at most; None runs until an escalation.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        sub_agents: Sequence[BaseAgent] | None = None,
        max_iterations: int | None = None,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
    ) -> None:
        if max_iterations is not None and max_iterations < 0:
            raise InvalidAgentError(f"max_iterations must be >= 0, got {max_iterations}")
        super().__init__(
            name=name,
            description=description,
            sub_agents=sub_agents,
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
        )
        self._set("max_iterations", max_iterations)

    max_iterations: int | None

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        exits = ctx.shared.loop_exits

        def goes_on(event: Event) -> bool:
            if not event.actions.escalate or event.id in exits:
                return True  # no escalation, or one an inner loop ended with already
            exits.add(event.id)  # this loop's exit: the loops around it go on
            return False

        return run_in_order(self, ctx, self.max_iterations, looping=True).pipe(
            ops.take_while(goes_on, inclusive=True),
        )
