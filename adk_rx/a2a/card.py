"""The agent card of a served agent: who it is, where it answers, what it can do.

Skills are read from the tree as google-adk 2.13 reads them: one for the agent itself, one
per tool it holds, one per sub-agent (a toolset's tools are listed only when they are
asked for at run time, so they are not on the card). The card names one JSON-RPC interface
at ``url`` speaking A2A 1.0 and, on the same endpoint, A2A 0.3's method names
(``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``).
"""

from __future__ import annotations

from typing import Any

from a2a.server.request_handlers import response_helpers
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent

__all__ = ["agent_card", "card_dict"]

_JSONRPC = "JSONRPC"
_PROTOCOL_VERSIONS = ("1.0", "0.3")


def _skills(agent: BaseAgent) -> list[AgentSkill]:
    description = agent.description or f"the agent {agent.name}"
    skills = [AgentSkill(id=agent.name, name=agent.name, description=description, tags=["agent"])]
    if isinstance(agent, LlmAgent):
        for tool in agent.tools:
            skills.append(
                AgentSkill(
                    id=f"{agent.name}-{tool.name}",
                    name=tool.name,
                    description=tool.description or tool.name,
                    tags=["tool"],
                )
            )
    for sub in agent.sub_agents:
        skills.append(
            AgentSkill(
                id=f"{agent.name}-{sub.name}",
                name=sub.name,
                description=sub.description or f"the agent {sub.name}",
                tags=["sub_agent"],
            )
        )
    return skills


def agent_card(agent: BaseAgent, url: str, *, version: str = "0.1.0") -> AgentCard:
    """The card of ``agent`` served at ``url`` (its JSON-RPC endpoint), streaming included."""
    return AgentCard(
        name=agent.name,
        description=agent.description or f"the agent {agent.name}",
        version=version,
        # One endpoint, listed once per protocol version it speaks: an SDK of either
        # generation finds its own (1.x prefers 1.0; 0.3 clients read the card's "url").
        supported_interfaces=[
            AgentInterface(url=url.rstrip("/"), protocol_binding=_JSONRPC, protocol_version=v)
            for v in _PROTOCOL_VERSIONS
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=_skills(agent),
    )


def card_dict(card: AgentCard) -> dict[str, Any]:
    """The card as the well-known route serves it: A2A 1.0's JSON, with the fields an A2A
    0.3 client reads (``url``, ``protocolVersion``...) beside them, as the SDK writes it."""
    return response_helpers.agent_card_to_dict(card)
