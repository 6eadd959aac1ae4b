"""ParallelAgent: runs its sub-agents at once, each in its own branch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.abc import SchedulerBase

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.rx.schedulers import io_scheduler
from adk_rx.rx.subscribe_on import subscribe_on_eager

if TYPE_CHECKING:
    from adk_rx.callback_types import AfterAgentCallback, BeforeAgentCallback, Callbacks

__all__ = ["ParallelAgent"]


class ParallelAgent(BaseAgent):
    """Runs every sub-agent concurrently; events arrive in completion order.

    Each sub-agent runs in branch ``"<parallel name>.<child name>"``, so siblings never see
    each other's events in their model contents. The first escalating event is emitted and
    then ends the agent, cancelling the other branches (unless a LoopAgent inside the branch
    consumed it: that exit ends the loop only); an error in one branch errors the
    agent and cancels the others. Disposing the subscription reaches every branch at once,
    on the disposing thread (``subscribe_on_eager``; stock ``subscribe_on`` would queue the
    disposal behind the branch's own work on its worker). The branches are merged inside the
    agent's deferred subscription, so every run has its own merge (and merge lock).

    Marble diagram::

        sub_agents [slow, fast]:   ----f1--s1--|
        fast escalates:            ----f1(esc)|   (slow is disposed)
        slow errors:               ----f1--X      (fast is disposed)

    Args:
        scheduler: where branches are subscribed (default: the Runner's I/O scheduler, else
            the shared I/O pool), so blocking sub-agents overlap. Pass a TestScheduler for
            virtual time.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        sub_agents: Sequence[BaseAgent] | None = None,
        scheduler: SchedulerBase | None = None,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            sub_agents=sub_agents,
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
        )
        self._set("scheduler", scheduler)

    scheduler: SchedulerBase | None

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        scheduler = self.scheduler or ctx.services.io_scheduler or io_scheduler()
        branch_ctx = ctx.copy(branch=ctx.branch or self.name)
        branches = [
            agent.run_async(branch_ctx).pipe(subscribe_on_eager(scheduler))
            for agent in self.sub_agents
        ]
        exits = ctx.shared.loop_exits  # an inner loop's exit ends that loop only
        return rx.merge(*branches).pipe(
            ops.take_while(
                lambda event: not event.actions.escalate or event.id in exits, inclusive=True
            )
        )
