"""What an event asks the runtime to do, and the small values its actions carry.

:class:`EventActions` rides on an :class:`~adk_rx.events.Event`: state and artifact deltas,
transfers, escalation, pauses for a human (:class:`ToolConfirmation`), compaction summaries
and workflow routes. All are frozen, slotted dataclasses; their maps default to one shared,
read-only empty mapping. ``adk_rx.events`` re-exports every public name here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

from adk_rx.state import merge_state_deltas

__all__ = [
    "CONFIRMATION_FUNCTION",
    "CREDENTIAL_FUNCTION",
    "EMPTY_ACTIONS",
    "PAUSE_FUNCTIONS",
    "EventActions",
    "EventCompaction",
    "NodeInfo",
    "RouteValue",
    "ToolConfirmation",
]


class _EmptyMapping(dict[str, Any]):
    """A shared, hashable, read-only empty mapping: the default of every action map.

    A dict, so that its truth test (``if actions.state_delta:``, three per stored event) is
    C code rather than a Python ``__len__`` call; every method that would change it raises.
    """

    __slots__ = ()

    def _read_only(self, *_: Any, **__: Any) -> Any:
        raise TypeError("the default action map is shared and read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = _read_only
    setdefault = update = _read_only  # pyright: ignore[reportAssignmentType]

    def __hash__(self) -> int:  # pyright: ignore[reportIncompatibleVariableOverride]
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and not other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


_EMPTY: Mapping[str, Any] = _EmptyMapping()
# Action maps are typed as read-only Mappings; on the wire they are plain objects.
ActionMap = Annotated[Mapping[str, Any], pydantic.PlainSerializer(dict, return_type=dict[str, Any])]
# The JSON form of events and their actions: ADK's camelCase keys, snake_case accepted.
JSON_CONFIG = pydantic.ConfigDict(
    alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True
)


@dataclass(frozen=True, slots=True)
class ToolConfirmation:
    """A request for, or an answer to, a human confirmation of one tool call."""

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = JSON_CONFIG

    hint: str = ""
    confirmed: bool = False
    payload: Any = None


CONFIRMATION_FUNCTION = "adk_request_confirmation"
"""The function call that asks the user to confirm a tool call (its answer is a
:class:`ToolConfirmation` as the call's function response)."""

CREDENTIAL_FUNCTION = "adk_request_credential"
"""The function call that asks the user for a credential (its args: the asking call's id and
the auth config; its answer: the auth config with the redirect URL, or the credential)."""

PAUSE_FUNCTIONS = frozenset({CONFIRMATION_FUNCTION, CREDENTIAL_FUNCTION})
"""The calls adk_rx makes to ask the user something: answered once, never shown to a model."""


@dataclass(frozen=True, slots=True)
class EventCompaction:
    """A summary that stands in for the session's events in a time range.

    Attributes:
        start_timestamp: timestamp of the first event summarised (inclusive).
        end_timestamp: timestamp of the last event summarised (inclusive).
        compacted_content: the summary, sent to the model in place of those events.
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = JSON_CONFIG

    start_timestamp: float
    end_timestamp: float
    compacted_content: types.Content


RouteValue = bool | int | str
"""A value a workflow node emits to choose which of its routed edges are followed."""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """Where in a workflow graph an event comes from (``adk_rx.workflow``).

    Attributes:
        path: the node's path, ``"<workflow>@<run>/<node>@<run>"``.
        output_for: node paths whose output this event's ``output`` is.
        message_as_output: the event's content (an agent node's answer) is the node's output.
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = JSON_CONFIG

    path: str | None = None
    output_for: tuple[str, ...] | None = None
    message_as_output: bool | None = None


@dataclass(frozen=True, slots=True)
class EventActions:
    """What an event asks the runtime to do besides showing its content.

    Attributes:
        state_delta: state keys written by this event (``State.REMOVED`` deletes a key).
        artifact_delta: artifact file name -> version saved by this event.
        transfer_to_agent: hand the conversation to the named agent.
        escalate: ask the enclosing loop or parallel agent to stop.
        skip_summarization: a tool's response is final; the model is not called again.
        end_of_agent: the agent that produced this event is done for this invocation.
        requested_auth_configs: function call id -> auth request (opaque to the core).
        requested_tool_confirmations: function call id -> the confirmation a tool asks for.
        agent_state: where the authoring agent is in its work (resumable apps), JSON data.
        compaction: the summary this event stores in place of older events.
        route: the route(s) a workflow node took (edges with a matching route are followed).
        rewind_before_invocation_id: this event rewinds the session to before that invocation
            (``Runner.rewind``): the events from it up to this one no longer count.
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = JSON_CONFIG

    state_delta: ActionMap = _EMPTY
    artifact_delta: ActionMap = _EMPTY
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    skip_summarization: bool | None = None
    end_of_agent: bool | None = None
    requested_auth_configs: ActionMap = _EMPTY
    requested_tool_confirmations: Annotated[
        Mapping[str, ToolConfirmation],
        pydantic.PlainSerializer(dict, return_type=dict[str, ToolConfirmation]),
    ] = _EMPTY
    agent_state: ActionMap | None = None
    compaction: EventCompaction | None = None
    route: RouteValue | list[RouteValue] | None = None
    rewind_before_invocation_id: str | None = None

    def merge(self, other: EventActions) -> EventActions:
        """Returns these actions with ``other`` laid on top.

        Scalars: the last non-None value wins (``end_of_agent`` and ``escalate`` are OR-ed).
        ``state_delta`` is deep-merged; the other maps are merged key by key.

        Raises:
            ConfigurationError: two nested state values have keys of different types.
        """
        if other is EMPTY_ACTIONS:
            return self
        if self is EMPTY_ACTIONS:
            return other
        return EventActions(
            state_delta=merge_state_deltas(self.state_delta, other.state_delta),
            artifact_delta={**self.artifact_delta, **other.artifact_delta},
            transfer_to_agent=_last(self.transfer_to_agent, other.transfer_to_agent),
            escalate=_either(self.escalate, other.escalate),
            skip_summarization=_last(self.skip_summarization, other.skip_summarization),
            end_of_agent=_either(self.end_of_agent, other.end_of_agent),
            requested_auth_configs={**self.requested_auth_configs, **other.requested_auth_configs},
            requested_tool_confirmations={
                **self.requested_tool_confirmations,
                **other.requested_tool_confirmations,
            },
            agent_state=_last(self.agent_state, other.agent_state),
            compaction=_last(self.compaction, other.compaction),
            route=_last(self.route, other.route),
            rewind_before_invocation_id=_last(
                self.rewind_before_invocation_id, other.rewind_before_invocation_id
            ),
        )

    def is_empty(self) -> bool:
        """True when the actions ask for nothing."""
        return self == EMPTY_ACTIONS

    def replace(self, **changes: Any) -> EventActions:
        """Returns a copy with the given fields changed."""
        return dataclasses.replace(self, **changes)


def _last(a: Any, b: Any) -> Any:
    return a if b is None else b


def _either(a: bool | None, b: bool | None) -> bool | None:
    return None if a is None and b is None else bool(a) or bool(b)


EMPTY_ACTIONS = EventActions()
