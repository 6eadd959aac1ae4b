"""Tool progress: reports of running tools become partial events of the calling agent.

A tool that declares ``reports_progress`` gets a sink on its ToolContext; each
``tool_context.report_progress(value)`` is emitted at once as a partial event (never
stored) whose ``custom_metadata["tool_progress"]`` is
``{"id": <function call id>, "name": <tool name>, "progress": value}``::

    tool:        --p1----p2------r|
    calls:       --P1----P2------(response event)|

A report that is itself an :class:`Event` is emitted as it is: an AgentTool streaming its
child run's events (partial ones), a delegated sub-agent's events (stored like any other).

The calls' stream carries the reports through :func:`adk_rx.rx.with_sink`: reports from tools
on other threads are serialized with the step's own events; a report after the calls
answered, or after disposal, is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pydantic_core

from adk_rx.events import Event

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.context import InvocationContext, ToolContext
    from adk_rx.tools.base import BaseTool

__all__ = ["TOOL_PROGRESS", "connect_progress", "progress_event"]

TOOL_PROGRESS = "tool_progress"
"""The ``custom_metadata`` key of a progress event."""

Sink = Callable[[Event], None]


def progress_event(
    agent: LlmAgent, ctx: InvocationContext, call_id: str | None, tool: BaseTool, value: Any
) -> Event:
    """The partial event that carries one progress report."""
    try:
        progress = pydantic_core.to_jsonable_python(value)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError):
        progress = str(value)
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        partial=True,
        custom_metadata={TOOL_PROGRESS: {"id": call_id, "name": tool.name, "progress": progress}},
    )


def connect_progress(
    agent: LlmAgent, ctx: InvocationContext, tool_context: ToolContext, tool: BaseTool, sink: Sink
) -> None:
    """Points a call's ``report_progress`` at ``sink``."""
    call_id = tool_context.function_call_id

    def report(value: Any) -> None:
        if isinstance(value, Event):
            # a child run's event, forwarded as it is: a streaming AgentTool's (partial), a
            # delegated sub-agent's (stored, as any event of the invocation)
            sink(value)
        else:
            sink(progress_event(agent, ctx, call_id, tool, value))

    tool_context.progress_sink = report
