"""Built-in tools: ``transfer_to_agent`` and ``exit_loop``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable

from adk_rx.rx._engine import sync
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["ExitLoopTool", "TransferToAgentTool", "exit_loop", "transfer_to_agent"]


class TransferToAgentTool(BaseTool):
    """``transfer_to_agent(agent_name)``: hands the conversation to another agent.

    An LlmAgent gets it automatically when it has sub-agents or may transfer to its parent
    or peers. The response is ``{}``; the transfer rides on the event's actions.
    """

    def __init__(self) -> None:
        super().__init__(
            name="transfer_to_agent",
            description="Transfer the question to another agent.",
            parameters={
                "type": "object",
                "properties": {
                    "agent_name": {"type": "string", "description": "the agent to transfer to"}
                },
                "required": ["agent_name"],
            },
        )

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Records the transfer on the call's actions."""
        name = args.get("agent_name")
        if not isinstance(name, str) or not name:
            return rx.throw(ValueError("transfer_to_agent needs a non-empty 'agent_name'"))
        tool_context.actions.transfer_to_agent = name
        return sync.just({})


class ExitLoopTool(BaseTool):
    """``exit_loop()``: ends the enclosing LoopAgent (escalates, skips summarization)."""

    def __init__(self) -> None:
        super().__init__(
            name="exit_loop",
            description="Exits the loop. Call this function only when you are instructed to do so.",
            parameters={"type": "object", "properties": {}},
        )

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Escalates, so the loop stops after this event."""
        tool_context.actions.escalate = True
        tool_context.actions.skip_summarization = True
        return sync.just({})


transfer_to_agent = TransferToAgentTool()
"""Hands the turn to another agent of the tree (added to an LlmAgent that may transfer)."""

exit_loop = ExitLoopTool()
"""Ends the enclosing LoopAgent (it escalates)."""
