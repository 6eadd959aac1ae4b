"""Progress in the event log: what agents record, and what a resumed invocation reads back.

In a resumable app every agent records its progress as events of the invocation:

* a workflow agent stores ``actions.agent_state`` before it starts a sub-agent
  (``{"current_sub_agent": name}``, plus ``"times_looped"`` for a LoopAgent);
* an agent that finished stores ``actions.end_of_agent`` (an agent paused by a pending
  long-running call has not finished).

:class:`ResumeLog` reads those events back. Replaying them in order, an ``agent_state`` of
agent X starts a new run of X's current sub-agent, so it forgets what X's descendants
recorded before (a LoopAgent's next iteration runs its sub-agents afresh). What is left
says, for each agent on the path where the invocation stopped, whether it finished, which
sub-agent and iteration it was in, and which events it had stored.

Each entry is taken once: an agent that runs again later in the resumed invocation (the
next iteration of a loop) runs afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event, EventActions
from adk_rx.rx import sync

__all__ = ["PendingCalls", "ResumeLog", "agent_state_event", "with_end_of_agent"]


def _subtree(agent: BaseAgent) -> Iterator[BaseAgent]:
    yield agent
    for sub in agent.sub_agents:
        yield from _subtree(sub)


class ResumeLog:
    """Where each agent of an invocation stopped, read from the invocation's stored events.

    Args:
        events: the invocation's stored events, in order (the session's events carrying
            its invocation id).
        root: the root of the agent tree.

    Attributes:
        answered: ids of every function call that has a stored response.
    """

    def __init__(self, events: Sequence[Event], root: BaseAgent) -> None:
        self._lock = threading.Lock()
        self._root = root
        self._ended: set[str] = set()
        self._states: dict[str, Mapping[str, Any]] = {}
        self._own: dict[str, list[Event]] = {}
        self._long_running: dict[str, str] = {}  # pending call id -> author
        self.answered: set[str] = set()
        for event in events:
            self._replay(event)

    def _replay(self, event: Event) -> None:
        if event.partial:
            return
        for response in event.get_function_responses():
            if response.id:
                self.answered.add(response.id)
                self._long_running.pop(response.id, None)
        author = event.author
        if author == "user":
            return
        actions = event.actions
        if actions.agent_state is not None:
            agent = self._root.find_agent(author)
            for descendant in _subtree(agent) if agent is not None else ():
                if descendant is agent:
                    continue
                self._ended.discard(descendant.name)
                self._states.pop(descendant.name, None)
                self._own.pop(descendant.name, None)
            self._states[author] = actions.agent_state
        if actions.end_of_agent:
            self._ended.add(author)
        if event.content is not None and event.content.parts and event.error_code is None:
            self._own.setdefault(author, []).append(event)
            for call_id in event.long_running_tool_ids or ():
                if call_id not in self.answered:
                    self._long_running[call_id] = author

    def take_ended(self, name: str) -> bool:
        """True (once) when agent ``name`` had finished in the stopped invocation."""
        with self._lock:
            if name in self._ended:
                self._ended.discard(name)
                return True
            return False

    def take_state(self, name: str) -> Mapping[str, Any] | None:
        """The last ``agent_state`` agent ``name`` stored (once), or None."""
        with self._lock:
            return self._states.pop(name, None)

    def take_events(self, name: str) -> list[Event]:
        """The events agent ``name`` stored in its unfinished run (once)."""
        with self._lock:
            return self._own.pop(name, [])

    def pending_in(self, agent: BaseAgent) -> set[str]:
        """Ids of long-running calls still unanswered that ``agent`` or a descendant made."""
        names = {a.name for a in _subtree(agent)}
        with self._lock:
            return {call_id for call_id, author in self._long_running.items() if author in names}

    def first_author(self, events: Sequence[Event]) -> BaseAgent | None:
        """The agent that took the invocation: the author of its first agent event."""
        for event in events:
            if event.author != "user":
                return self._root.find_agent(event.author)
        return None


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
