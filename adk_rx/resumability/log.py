"""The resume log: where each agent of a stopped invocation was, read from its stored events.

The events agents record in a resumable app (``progress.py``) are read back by
:class:`ResumeLog`. Replaying them in order, an ``agent_state`` of agent X starts a new run of
X's current sub-agent, so it forgets what X's descendants recorded before (a LoopAgent's next
iteration runs its sub-agents afresh); a workflow's record that a node starts forgets what
that node stored before. What is left says, for each agent on the path where the
invocation stopped, whether it finished, which sub-agent and iteration it was in, and which
events it had stored.

Each entry is taken once: an agent that runs again later in the resumed invocation (the
next iteration of a loop) runs afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from adk_rx.events import Event

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["NODE_KEY", "ResumeLog"]

NODE_KEY = "node"
"""The ``agent_state`` key of a workflow's record of one node run (``adk_rx.workflow``)."""


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
        state = actions.agent_state
        if state is not None and NODE_KEY in state:
            # A workflow records its nodes: a node that starts runs afresh (what it stored
            # in an earlier run is forgotten); the other nodes keep what they stored.
            if state.get("status") == "running":
                self._forget(self._root.find_agent(str(state[NODE_KEY])), keep_self=False)
        elif state is not None:
            self._forget(self._root.find_agent(author), keep_self=True)
            self._states[author] = state
        if actions.end_of_agent:
            self._ended.add(author)
        if event.content is not None and event.content.parts and event.error_code is None:
            self._own.setdefault(author, []).append(event)
            for call_id in event.long_running_tool_ids or ():
                if call_id not in self.answered:
                    self._long_running[call_id] = author

    def _forget(self, agent: BaseAgent | None, *, keep_self: bool) -> None:
        for descendant in _subtree(agent) if agent is not None else ():
            if keep_self and descendant is agent:
                continue
            self._ended.discard(descendant.name)
            self._states.pop(descendant.name, None)
            self._own.pop(descendant.name, None)

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
