"""Sub-agents one after another, for SequentialAgent (one round) and LoopAgent (rounds).

The runs come from a lazy generator through stock ``concat_with_iterable``: the next
sub-agent is taken only once the previous one completed, so the generator decides, at that
moment, whether another one starts:

* no: a long-running call of an earlier sub-agent is still pending (the invocation is
  paused until its response arrives);
* in a resumable app, each start is preceded by an ``agent_state`` event (which sub-agent,
  which round), and a resumed invocation starts at the sub-agent and round it stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.resumability.progress import PendingCalls, agent_state_event
from adk_rx.rx._engine import sync

__all__ = ["run_in_order"]


def _start(agent: BaseAgent, ctx: InvocationContext) -> tuple[int, int, bool]:
    """(round, sub-agent index, resumed) where the run starts."""
    state = ctx.resume.take_state(agent.name) if ctx.resume is not None else None
    if not state:
        return 0, 0, False
    names = [sub.name for sub in agent.sub_agents]
    current = state.get("current_sub_agent")
    if current not in names:
        return 0, 0, False
    return int(state.get("times_looped", 0)), names.index(current), True


def run_in_order(
    agent: BaseAgent, ctx: InvocationContext, rounds: int | None, *, looping: bool
) -> Observable[Event]:
    """The events of ``agent``'s sub-agents, in order, for ``rounds`` rounds (None: endless).

    Args:
        agent: the workflow agent.
        ctx: its context.
        rounds: how many times the sub-agents run; None repeats until disposed.
        looping: record ``times_looped`` in the agent state (a LoopAgent).
    """
    subs = agent.sub_agents
    if not subs or rounds == 0:
        return sync.empty()

    def build(_: Any) -> Observable[Event]:
        round_, index, resumed = _start(agent, ctx)
        pending = PendingCalls(ctx.resume.pending_in(agent) if ctx.resume is not None else None)
        fresh = ctx.copy(resume=None) if ctx.resume is not None else ctx

        def runs() -> Iterator[Observable[Event]]:
            nonlocal round_, index, resumed
            while rounds is None or round_ < rounds:
                if pending.paused:
                    return  # a long-running call waits for its answer: nothing more starts
                child = subs[index]
                if ctx.services.is_resumable and not resumed:
                    state: dict[str, Any] = {"current_sub_agent": child.name}
                    if looping:
                        state["times_looped"] = round_
                    yield sync.just(agent_state_event(ctx, agent, state))
                yield child.run_async(ctx if resumed else fresh).pipe(
                    ops.do_action(pending.observe)
                )
                resumed = False
                index += 1
                if index == len(subs):
                    index, round_ = 0, round_ + 1

        return rx.concat_with_iterable(runs())

    return rx.defer(build)
