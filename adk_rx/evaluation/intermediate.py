"""What an agent did between a user's message and its final answer, in google-adk's two shapes.

* :class:`IntermediateData` (what eval set files hold): the tool calls, their responses, and
  the texts agents said on the way.
* :class:`InvocationEvents` (what a run produces): the events themselves, projected to
  ``author`` and ``content``; judges read the calls, responses and texts in order from them.

:func:`tool_calls`, :func:`tool_responses` and :func:`calls_with_responses` read either shape,
as google-adk's ``get_all_tool_calls`` family does. :class:`AppDetails` is what the judges
learn about the agents: their instructions and tool declarations.
"""

from __future__ import annotations

from typing import Any

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

__all__ = [
    "RUNTIME_REQUESTS",
    "AgentDetails",
    "AppDetails",
    "IntermediateData",
    "InvocationEvent",
    "InvocationEvents",
    "calls_with_responses",
    "content_text",
    "tool_calls",
    "tool_responses",
]


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow"
    )


class IntermediateData(_Model):
    """What happened between the user's message and the final response.

    Attributes:
        tool_uses: the function calls the agents made, in order.
        tool_responses: their responses, in order.
        intermediate_responses: ``[author, parts]`` of texts agents said on the way.
    """

    tool_uses: list[types.FunctionCall] = []
    tool_responses: list[types.FunctionResponse] = []
    intermediate_responses: list[tuple[str, list[types.Part]]] = []


class InvocationEvent(_Model):
    """One event of a run, as the evaluators see it."""

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )

    author: str
    content: types.Content | None = None


class InvocationEvents(_Model):
    """The events of one invocation, in order."""

    invocation_events: list[InvocationEvent] = []


class AgentDetails(_Model):
    """One agent of the app: its instructions and the tool declarations it was given."""

    name: str = ""
    instructions: str = ""
    tool_declarations: list[Any] = []


class AppDetails(_Model):
    """The agents that took part in an invocation, by name."""

    agent_details: dict[str, AgentDetails] = {}

    def instructions_of(self, agent_name: str) -> str:
        """The instructions of one agent ('' when it is not known)."""
        found = self.agent_details.get(agent_name)
        return found.instructions if found else ""


Intermediate = IntermediateData | InvocationEvents

RUNTIME_REQUESTS = frozenset({"adk_request_confirmation", "adk_request_credential"})
"""Calls the runtime makes to ask the user, not tools the agent chose: left out of
trajectories (google-adk keeps them, but their arguments carry ids that differ per run)."""


def _parts(data: InvocationEvents) -> list[types.Part]:
    return [
        part
        for event in data.invocation_events
        if event.content and event.content.parts
        for part in event.content.parts
    ]


def tool_calls(data: Intermediate | None) -> list[types.FunctionCall]:
    """The function calls, in order (none without data)."""
    if data is None:
        return []
    if isinstance(data, IntermediateData):
        calls = list(data.tool_uses)
    else:
        calls = [p.function_call for p in _parts(data) if p.function_call]
    return [c for c in calls if c.name not in RUNTIME_REQUESTS]


def tool_responses(data: Intermediate | None) -> list[types.FunctionResponse]:
    """The function responses, in order (none without data)."""
    if data is None:
        return []
    if isinstance(data, IntermediateData):
        responses = list(data.tool_responses)
    else:
        responses = [p.function_response for p in _parts(data) if p.function_response]
    return [r for r in responses if r.name not in RUNTIME_REQUESTS]


def calls_with_responses(
    data: Intermediate | None,
) -> list[tuple[types.FunctionCall, types.FunctionResponse | None]]:
    """Each call with the response of the same id (None when it has none)."""
    by_id = {response.id: response for response in tool_responses(data)}
    return [(call, by_id.get(call.id)) for call in tool_calls(data)]


def content_text(content: types.Content | None) -> str | None:
    """The texts of a content's parts joined by newlines (as google-adk reads them: '' for
    parts without text, None without parts)."""
    if content is None or not content.parts:
        return None
    return "\n".join(part.text for part in content.parts if part.text)
