"""How an agent's output schema reaches the model request.

Decided per request by :func:`apply_output_schema`:

* an agent without tools: the request's config asks for ``application/json`` with the
  schema in ``response_json_schema`` (providers translate it; OpenAI-compatible servers get
  ``response_format`` of type ``json_schema``);
* an agent with tools: the config stays free (most models cannot mix tools and a response
  schema); the agent gets the ``set_model_response`` tool, whose parameters are the schema,
  and a call to it ends the turn with a final event whose text is the JSON.

An answer that does not validate is repaired once: the LlmAgent's structured output
(:mod:`adk_rx.agents.structured_output`) leaves a note with :func:`set_repair_note`, and the
next request of the agent carries it as a user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from adk_rx.context import InvocationContext
from adk_rx.tools.output_schema import json_schema

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["apply_output_schema", "forget_repair_note", "set_repair_note", "uses_response_tool"]

_REPAIR_KEY = "__adk_rx_output_repair__:"


def uses_response_tool(agent: LlmAgent) -> bool:
    """True when the agent answers through ``set_model_response`` (it has tools)."""
    return agent.output_schema is not None and (
        bool(agent.tools) or bool(agent.toolsets) or bool(agent.transfer_targets())
    )


def apply_output_schema(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """Puts the schema in the request's config (no tools) and any pending repair note."""
    schema = agent.output_schema
    if schema is None:
        return
    if not uses_response_tool(agent):
        request.config.response_mime_type = "application/json"
        request.config.response_json_schema = json_schema(schema)
    note = ctx.shared.callback_data.get(_REPAIR_KEY + agent.name)
    if note:
        request.contents.append(
            types.Content(role="user", parts=[types.Part(text=note)]),
        )


def set_repair_note(ctx: InvocationContext, agent_name: str, note: str) -> None:
    """The next requests of agent ``agent_name`` in this invocation end with ``note``."""
    ctx.shared.callback_data[_REPAIR_KEY + agent_name] = note


def forget_repair_note(ctx: InvocationContext, agent_name: str) -> None:
    """Drops the repair note of agent ``agent_name`` (its run is over)."""
    ctx.shared.callback_data.pop(_REPAIR_KEY + agent_name, None)
