"""Progress in the event log: what agents of a resumable app record as they run.

* a workflow agent stores ``actions.agent_state`` before it starts a sub-agent
  (``{"current_sub_agent": name}``, plus ``"times_looped"`` for a LoopAgent):
  :func:`agent_state_event`;
* an agent that finished stores ``actions.end_of_agent`` (an agent paused by a pending
  long-running call has not finished): :func:`with_end_of_agent`;
* :class:`PendingCalls` tells a SequentialAgent or LoopAgent that a long-running call is still
  unanswered, so no further sub-agent starts.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.events import Event, EventActions
from adk_rx.rx._engine import sync

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["PendingCalls", "agent_state_event", "with_end_of_agent"]


class PendingCalls:
    """Long-running calls seen in a stream of events that no later event has answered.

    A SequentialAgent or LoopAgent that sees one starts no further sub-agent: the
    invocation is paused until the call's response arrives.
    """

    __slots__ = ("_ids", "_lock")

    def __init__(self, ids: set[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set(ids or ())

    def observe(self, event: Event) -> None:
        """Takes note of an event's pending long-running calls and of its responses."""
        if event.partial:
            return
        pending = event.long_running_tool_ids
        responses = event.get_function_responses() if event.content is not None else []
        if not pending and not responses:
            return
        with self._lock:
            if pending:
                self._ids.update(c.id for c in event.get_function_calls() if c.id in pending)
            for response in responses:
                self._ids.discard(response.id)  # type: ignore[arg-type]

    @property
    def paused(self) -> bool:
        """True while a long-running call is waiting for its response."""
        with self._lock:
            return bool(self._ids)


def agent_state_event(ctx: InvocationContext, agent: BaseAgent, state: dict[str, Any]) -> Event:
    """The event in which ``agent`` records where it is."""
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        actions=EventActions(agent_state=state),
    )


def with_end_of_agent(
    agent: BaseAgent, ctx: InvocationContext, events: Observable[Event]
) -> Observable[Event]:
    """``events``, then an ``end_of_agent`` event unless the agent paused or was cancelled."""
    seeded = ctx.resume.pending_in(agent) if ctx.resume is not None else None
    pending = PendingCalls(seeded)

    def finish(_: Any) -> Observable[Event]:
        if pending.paused or ctx.cancelled:
            return sync.empty()
        return sync.just(
            Event(
                author=agent.name,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                actions=EventActions(end_of_agent=True),
            )
        )

    return events.pipe(ops.do_action(pending.observe), ops.concat(rx.defer(finish)))
