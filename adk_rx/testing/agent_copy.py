"""Testing an agent tree with a scripted model: a copy of the tree, nothing process-wide.

    from my_agents.support.agent import root_agent
    from adk_rx.testing import ScriptedLlm, with_model

    agent = with_model(root_agent, ScriptedLlm(["hello"]))          # every agent's model
    agent = with_model(root_agent, {"billing": ScriptedLlm([...])})  # only billing's

:func:`with_model` rebuilds the tree from each agent's constructor arguments (agents are
immutable, and a sub-agent may have only one parent, so the original tree is untouched and
keeps working). Nothing global changes: the ``LlmRegistry`` is not touched, other tests and
threads see the original models, and there is nothing to undo.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, TypeVar

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.errors import ConfigurationError
from adk_rx.models.base import BaseLlm

__all__ = ["with_model"]

A = TypeVar("A", bound=BaseAgent)


def with_model(agent: A, model: BaseLlm | Mapping[str, BaseLlm]) -> A:
    """A copy of ``agent``'s tree whose LlmAgents call ``model``.

    Args:
        agent: the root of the tree (usually the ``root_agent`` of an agent folder).
        model: one model for every LlmAgent of the tree (agents that inherit their parent's
            model keep inheriting it), or agent name -> model for some of them (the others
            keep their own).

    Raises:
        ConfigurationError: ``model`` names an agent that is not in the tree, or an agent
            of a custom class cannot be rebuilt from its attributes.
    """
    if isinstance(model, Mapping):
        unknown = sorted(set(model) - _names(agent))
        if unknown:
            raise ConfigurationError(
                f"with_model: no agent named {', '.join(map(repr, unknown))} in the tree of "
                f"{agent.name!r} (agents: {', '.join(sorted(_names(agent)))})"
            )
    return _copy(agent, model)


def _names(agent: BaseAgent) -> set[str]:
    names = {agent.name}
    for sub in agent.sub_agents:
        names |= _names(sub)
    return names


def _constructor_fields(cls: type) -> list[str]:
    fields: dict[str, None] = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for name, param in inspect.signature(init).parameters.items():
            if param.kind is param.KEYWORD_ONLY:
                fields[name] = None
    return list(fields)


def _copy(agent: A, model: BaseLlm | Mapping[str, BaseLlm]) -> A:
    kwargs: dict[str, Any] = {}
    for field in _constructor_fields(type(agent)):
        if field == "sub_agents":
            kwargs[field] = [_copy(sub, model) for sub in agent.sub_agents]
        elif field == "tools" and isinstance(agent, LlmAgent):
            kwargs[field] = [*agent.tools, *agent.toolsets]
        elif hasattr(agent, field):
            kwargs[field] = getattr(agent, field)
        else:
            raise ConfigurationError(
                f"with_model cannot rebuild agent {agent.name!r}: {type(agent).__name__} takes "
                f"{field!r} but does not keep it as an attribute of that name"
            )
    if isinstance(agent, LlmAgent):
        if isinstance(model, BaseLlm):
            if agent.model is not None:
                kwargs["model"] = model
        elif agent.name in model:
            kwargs["model"] = model[agent.name]
    return type(agent)(**kwargs)
