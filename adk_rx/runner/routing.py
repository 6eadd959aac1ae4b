"""Which agent of the tree takes the next turn of a session."""

from __future__ import annotations

from adk_rx.agents.base import BaseAgent
from adk_rx.sessions.session import Session

__all__ = ["agent_to_run"]


def _transferable(agent: BaseAgent) -> bool:
    from adk_rx.agents.llm import LlmAgent

    # Every agent from ``agent`` up to and including the root must be an LlmAgent, so a
    # workflow root (Sequential, Loop, Parallel) always takes the next turn itself.
    node: BaseAgent | None = agent
    while node is not None:
        if not isinstance(node, LlmAgent) or node.disallow_transfer_to_parent:
            return False
        node = node.parent_agent
    return True


def agent_to_run(root: BaseAgent, session: Session) -> BaseAgent:
    """The agent that takes the next turn.

    A user function response goes to the agent that made the call; otherwise the most
    recent agent that may take over (every step up to the root an LlmAgent allowed to
    transfer to its parent); otherwise the root.
    """
    events = session.events
    if events:
        responses = events[-1].get_function_responses()
        if events[-1].author == "user" and responses:
            ids = {r.id for r in responses}
            for event in reversed(events[:-1]):
                if ids & {c.id for c in event.get_function_calls()}:
                    return root.find_agent(event.author) or root
    for event in reversed(events):
        if event.author == "user":
            continue
        if event.author == root.name:
            return root
        agent = root.find_sub_agent(event.author)
        if agent is not None and _transferable(agent):
            return agent
    return root
