"""The summarizer a compacting app gets when its config names none: the tree's own model.

It lives apart from the rest of the package because it reads the agent tree (it sits with the
agents, above the flows that use the package's other modules).
"""

from __future__ import annotations

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.compaction.summarizer import LlmEventSummarizer
from adk_rx.errors import ConfigurationError

__all__ = ["default_summarizer"]


def default_summarizer(root: BaseAgent) -> LlmEventSummarizer:
    """An :class:`LlmEventSummarizer` on the root agent's model (else the first LlmAgent's).

    Raises:
        ConfigurationError: no LlmAgent of the tree has a model.
    """
    pending = [root]
    while pending:
        agent = pending.pop(0)
        if isinstance(agent, LlmAgent) and agent.model is not None:
            return LlmEventSummarizer(agent.canonical_model)
        pending.extend(agent.sub_agents)
    raise ConfigurationError(
        "events compaction needs a summarizer: the agent tree has no LlmAgent with a model; "
        "pass EventsCompactionConfig(summarizer=...)"
    )
