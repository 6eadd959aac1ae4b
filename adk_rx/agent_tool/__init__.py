"""AgentTool: another agent, called like a function, as a child run of the caller's turn.

One call, followed through the modules of this package:

1. ``tool.py``: the model calls the tool with ``{"request": text}`` (or the arguments of the
   agent's ``input_schema``); :class:`AgentTool` builds a child :class:`~adk_rx.runner.Runner`
   on a private in-memory session seeded with the caller's state, sharing the caller's
   memory service, schedulers, plugins and telemetry.
2. ``forwarding_artifacts.py``: the child run's artifacts are the caller's session's; a save
   is recorded in the caller's ``artifact_delta``.
3. The child run's state writes reach the caller's state as they happen, its token usage is
   added to the caller's function-response event, and its last text is the answer
   (validated against the agent's ``output_schema`` when it has one).
4. ``child_confirmation.py``: a child run that stops on a confirmation request is surfaced to
   the caller's user; the answer, in a later turn, rebuilds the child session from the
   request's payload and goes on where it stopped.

The package sits above the runner (it runs one), so nothing below it imports it.
"""

from adk_rx.agent_tool.tool import AgentTool

__all__ = ["AgentTool"]
