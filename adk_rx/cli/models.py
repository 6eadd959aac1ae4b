"""Choosing the model of ``adk-rx run``: ``--model NAME`` and ``--replay FILE``.

Agents are immutable, so the override is put in place before the agent module is imported:

1. The ``ADK_RX_MODEL`` environment variable is set to ``NAME`` (or ``replay:<FILE>``). An
   ``agent.py`` that picks its model in code reads it, e.g.
   ``model=os.environ.get("ADK_RX_MODEL", "gemini-2.5-flash")``.
2. A catch-all pattern is registered last in the process's :class:`LlmRegistry` (the latest
   registration wins), so every agent whose model is a *name* resolves to the override.
3. After loading, :func:`check_override` verifies that every agent resolves to the override:
   an agent built with a model *object* (a ``ScriptedLlm``, a configured ``GeminiLlm``)
   cannot be changed from outside, and running it anyway would talk to a model the user
   did not ask for, so that is an error that names the agent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from adk_rx.agent_tool import AgentTool
from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.errors import ConfigurationError
from adk_rx.models.base import BaseLlm
from adk_rx.models.recording import ReplayLlm
from adk_rx.models.registry import LlmRegistry

__all__ = ["MODEL_ENV", "check_override", "override_model"]

MODEL_ENV = "ADK_RX_MODEL"


def override_model(name: str | None, replay: str | None, *, reuse: bool = False) -> BaseLlm | None:
    """Builds the override model and puts it in place; None when neither is given.

    With ``reuse``, a replayed recording answers every matching request, not once each.

    Raises:
        AdkRxError: the name matches no provider, its credentials are missing, or the
            recording cannot be read.
    """
    if replay is not None:
        llm: BaseLlm = ReplayLlm(replay, reuse=reuse)
        os.environ[MODEL_ENV] = f"replay:{Path(replay).resolve()}"
    elif name is not None:
        llm = LlmRegistry.resolve(name)
        os.environ[MODEL_ENV] = name
    else:
        return None
    LlmRegistry.register(r".*", lambda _name: llm)
    return llm


def check_override(root: BaseAgent, llm: BaseLlm) -> None:
    """Raises ConfigurationError naming each agent that would not use ``llm``."""
    stuck = [
        f"{agent.name} ({type(agent.model).__name__})"
        for agent in _llm_agents(root)
        if agent.model is not None and agent.canonical_model is not llm
    ]
    if stuck:
        raise ConfigurationError(
            f"--model/--replay cannot replace the model object of: {', '.join(stuck)}; give "
            f"those agents a model name, or read os.environ[{MODEL_ENV!r}] in agent.py"
        )


def _llm_agents(agent: BaseAgent) -> Iterator[LlmAgent]:
    if isinstance(agent, LlmAgent):
        yield agent
        for tool in agent.tools:
            if isinstance(tool, AgentTool):
                yield from _llm_agents(tool.agent)
    for sub in agent.sub_agents:
        yield from _llm_agents(sub)
