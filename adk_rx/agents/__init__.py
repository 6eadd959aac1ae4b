"""Agents: the base class, the model-driven LlmAgent and the workflow agents."""

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.agents.loop import LoopAgent
from adk_rx.agents.parallel import ParallelAgent
from adk_rx.agents.sequential import SequentialAgent

__all__ = ["BaseAgent", "LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"]
