"""SequentialAgent: runs its sub-agents one after another."""

from __future__ import annotations

from reactivex import Observable

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.in_order import run_in_order
from adk_rx.context import InvocationContext
from adk_rx.events import Event

__all__ = ["SequentialAgent"]


class SequentialAgent(BaseAgent):
    """Runs each sub-agent to completion, in order, in the same invocation.

    Later sub-agents see what earlier ones wrote (``temp:`` keys included), because they all
    share the invocation's session view. An escalating event does not stop it (use a
    LoopAgent for that). Disposing the subscription (which a cancelled invocation does)
    starts no further sub-agent, and neither does a pending long-running call (the
    invocation waits for its response). In a resumable app it records which sub-agent runs
    (``agent_state``), and a resumed invocation continues at that sub-agent.

    Marble diagram::

        sub_agents [a, b]:   --a1--a2--b1--|
        a1 escalates:        --a1--a2--b1--|   (escalation is passed on, not acted on)
        a2 is a pending long-running call:  --a1--a2--|   (b does not start)
    """

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        return run_in_order(self, ctx, 1, looping=False)
