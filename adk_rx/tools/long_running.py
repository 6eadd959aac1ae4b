"""LongRunningFunctionTool: a function tool whose answer may come in a later turn."""

from __future__ import annotations

from adk_rx.tools.function import FunctionTool

__all__ = ["LONG_RUNNING_NOTE", "LongRunningFunctionTool"]

LONG_RUNNING_NOTE = (
    "NOTE: this tool is long-running: it may answer later, in a following turn. If it has "
    "already answered with a pending or intermediate status, do not call it again for the "
    "same request."
)
"""Appended to the description so the model does not call the tool again while it waits."""


class LongRunningFunctionTool(FunctionTool):
    """A :class:`FunctionTool` marked ``is_long_running``.

    Its call ids go into the function-call event's ``long_running_tool_ids``. A ``None``
    result is kept as ``None`` ("no response yet": the turn ends without a function
    response), any other result is mapped like a function tool's (``{"status": "pending"}``
    answers the model at once). The final answer arrives later as a user message carrying
    a ``FunctionResponse`` with the same call id.

    Takes the arguments of :class:`FunctionTool`; the description gets a note telling the
    model that the tool may answer late.
    """

    _IS_LONG_RUNNING = True

    def _described(self, description: str) -> str:
        return f"{description}\n\n{LONG_RUNNING_NOTE}" if description else LONG_RUNNING_NOTE
