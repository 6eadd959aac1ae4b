"""SequentialAgent: runs its sub-agents one after another."""

from __future__ import annotations

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event

__all__ = ["SequentialAgent"]


class SequentialAgent(BaseAgent):
    """Runs each sub-agent to completion, in order, in the same invocation.

    Later sub-agents see what earlier ones wrote (``temp:`` keys included), because they all
    share the invocation's session view. An escalating event does not stop it (use a
    LoopAgent for that). Disposing the subscription (which a cancelled invocation does)
    starts no further sub-agent.

    Marble diagram::

        sub_agents [a, b]:   --a1--a2--b1--|
        a1 escalates:        --a1--a2--b1--|   (escalation is passed on, not acted on)
    """

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        return rx.from_iterable(self.sub_agents).pipe(
            ops.concat_map(lambda agent: agent.run_async(ctx))
        )
