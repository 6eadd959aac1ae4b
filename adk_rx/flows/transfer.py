"""Agent transfer: how the model is told whom it may hand the conversation to.

Who may be a target is a rule of the agent tree: :meth:`LlmAgent.transfer_targets`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.agents.llm import LlmAgent

__all__ = ["transfer_instruction"]


def transfer_instruction(agent: LlmAgent, targets: list[BaseAgent]) -> str:
    """The instruction that lists the transfer targets for the model."""
    lines = [
        "You have a list of other agents to transfer to:",
        "",
        *(f"Agent name: {t.name}\nAgent description: {t.description}\n" for t in targets),
        "If you are the best to answer the question according to your description, you can "
        "answer it.",
        "",
        "If another agent is better for answering the question according to its description, "
        "call `transfer_to_agent` function to transfer the question to that agent. When "
        "transferring, do not generate any text other than the function call.",
    ]
    parent = agent.parent_agent
    if parent is not None and not agent.disallow_transfer_to_parent and parent in targets:
        lines += [
            "",
            f"Your parent agent is {parent.name}. If neither the other agents nor you are best "
            "for answering the question according to the descriptions, transfer to your parent "
            "agent.",
        ]
    names = ", ".join(sorted(t.name for t in targets))
    lines += ["", f"NOTE: the only available agents for `transfer_to_agent` function are {names}."]
    return "\n".join(lines)
