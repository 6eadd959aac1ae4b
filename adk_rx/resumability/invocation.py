"""Resuming an invocation: find it in the session and rebuild where its agents stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from adk_rx.context import InvocationContext
from adk_rx.errors import InvocationNotFoundError
from adk_rx.resumability.log import ResumeLog
from adk_rx.sessions.session import Session

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["resume_from_log", "resumed_user_content"]


def resumed_user_content(session: Session, invocation_id: str) -> types.Content | None:
    """The user message that started invocation ``invocation_id`` of the session.

    Raises:
        InvocationNotFoundError: the session holds no event of that invocation.
    """
    found = False
    for event in session.events:
        if event.invocation_id != invocation_id:
            continue
        found = True
        if event.author == "user" and event.content is not None:
            return event.content
    if not found:
        raise InvocationNotFoundError(
            f"session {session.id!r} holds no invocation {invocation_id!r}; resume an "
            "invocation id that an earlier run of this session reported (Event.invocation_id)"
        )
    return None


def resume_from_log(ctx: InvocationContext, root: BaseAgent) -> BaseAgent:
    """Reads the invocation's stored events into ``ctx.resume``; returns the agent to run
    (the one that took the invocation at first)."""
    events = [e for e in ctx.session.events if e.invocation_id == ctx.invocation_id]
    log = ResumeLog(events, root)
    ctx.resume = log
    return log.first_author(events) or root
