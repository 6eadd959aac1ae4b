"""Which agent of the tree takes the next turn of a session."""

from __future__ import annotations

from adk_rx.agents.base import BaseAgent
from adk_rx.sessions.rewind import live_events
from adk_rx.sessions.session import Session

__all__ = ["agent_to_run"]


def agent_to_run(root: BaseAgent, session: Session) -> BaseAgent:
    """The agent that takes the next turn.

    A user function response goes to the agent that made the call; otherwise the most
    recent agent that may take over (every step up to the root an LlmAgent allowed to
    transfer to its parent); otherwise the root. Rewound events do not count.
    """
    if not root.sub_agents:  # no other agent to take it (and the history need not be read)
        return root
    events = session.events
    if _has_rewind(session):
        events = live_events(events)
    answers = False  # the last event is a user's message that answers calls (rarely)
    if events and events[-1].author == "user" and (content := events[-1].content) is not None:
        for part in content.parts or ():
            if part.function_response is not None:
                answers = True
                break
    if answers:
        responses = events[-1].get_function_responses()
        if responses:
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
        if agent is not None and agent.may_take_next_turn():
            return agent
    return root


_REWINDS = ("routing", "rewinds")


def _has_rewind(session: Session) -> bool:
    """True when the session holds a rewind; memoised on the session (as its contents are),
    so a turn looks only at the events added since the previous one, not at the history."""
    events = session.events
    memo: tuple[int, str | None, bool] | None = session._memo.get(_REWINDS)  # pyright: ignore[reportPrivateUsage]
    start, found = 0, False
    if memo is not None:
        count, last_id, found = memo
        if count <= len(events) and (count == 0 or events[count - 1].id == last_id):
            start = count
        else:
            found = False
    if not found:
        for event in events[start:]:  # (as has_rewind, without a call per event)
            if event.actions.rewind_before_invocation_id:
                found = True
                break
    last = events[-1].id if events else None
    session._memo[_REWINDS] = (len(events), last, found)  # pyright: ignore[reportPrivateUsage]
    return found
