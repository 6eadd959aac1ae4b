"""Events and their actions: the immutable values an invocation produces.

An :class:`Event` is one thing that happened in a session: a user message, a model reply
(or a streamed chunk of one), a tool's response. State changes never mutate anything in
place: they ride on the event as ``actions.state_delta`` and the Runner applies them when it
persists the event.

Both classes are frozen, slotted dataclasses: assigning a field raises, and an event costs a
few hundred bytes (a streamed chunk's, less: ``adk_rx.flows.light_event``). JSON uses
ADK's camelCase keys (``invocationId``, ``stateDelta``...) and accepts snake_case on input.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from random import getrandbits
from typing import Annotated, Any, ClassVar

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel

from adk_rx.state import merge_state_deltas

__all__ = [
    "CONFIRMATION_FUNCTION",
    "CREDENTIAL_FUNCTION",
    "PAUSE_FUNCTIONS",
    "Event",
    "EventActions",
    "EventCompaction",
    "NodeInfo",
    "RouteValue",
    "ToolConfirmation",
    "new_event_id",
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
_Map = Annotated[Mapping[str, Any], pydantic.PlainSerializer(dict, return_type=dict[str, Any])]
_JSON_CONFIG = pydantic.ConfigDict(
    alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True
)


_UUID4_MASK = ~((0xF << 76) | (0x3 << 62))
_UUID4_BITS = (0x4 << 76) | (0x2 << 62)


def new_event_id() -> str:
    """Returns a fresh event id: a random (version 4) UUID as 32 hex digits.

    Drawn from ``random.getrandbits`` (reseeded in forked children) rather than
    ``uuid.uuid4()``: ids need uniqueness, not secrecy, and this is 6x cheaper per event.
    """
    return f"{(getrandbits(128) & _UUID4_MASK) | _UUID4_BITS:032x}"


def new_call_id() -> str:
    """Returns a fresh client-side function-call id: ``adk-`` and 32 hex digits.

    For calls whose model (or provider) sent none; the prefix tells them apart.
    """
    return f"adk-{new_event_id()}"


@dataclass(frozen=True, slots=True)
class ToolConfirmation:
    """A request for, or an answer to, a human confirmation of one tool call."""

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = _JSON_CONFIG

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

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = _JSON_CONFIG

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

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = _JSON_CONFIG

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

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = _JSON_CONFIG

    state_delta: _Map = _EMPTY
    artifact_delta: _Map = _EMPTY
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    skip_summarization: bool | None = None
    end_of_agent: bool | None = None
    requested_auth_configs: _Map = _EMPTY
    requested_tool_confirmations: Annotated[
        Mapping[str, ToolConfirmation],
        pydantic.PlainSerializer(dict, return_type=dict[str, ToolConfirmation]),
    ] = _EMPTY
    agent_state: _Map | None = None
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


@dataclass(frozen=True, slots=True, init=False)  # (its __init__ is its own: see there)
class Event:
    """One immutable entry of a session's history.

    Attributes:
        id: uuid4 hex, unique per event.
        invocation_id: ``e-<uuid>`` of the invocation that produced the event.
        author: the agent's name, or ``"user"``.
        content: what was said (text, function calls or responses, media).
        actions: state changes and control requests carried by the event.
        long_running_tool_ids: ids of calls to long-running tools that are still pending.
        partial: a streamed chunk; shown to subscribers, never persisted.
        turn_complete: the model finished its turn (streaming).
        error_code, error_message: the model (or the runtime) reports an error.
        finish_reason: why the model stopped.
        usage_metadata: token counts reported by the model.
        interrupted: the model's turn was interrupted.
        input_transcription: what a live model heard the user say.
        output_transcription: the text of a live model's spoken answer.
        model_version: the model version that produced the content.
        grounding_metadata: the sources a grounded answer rests on (search citations).
        citation_metadata: the sources the answer quotes.
        avg_logprobs: the mean log probability of the answer's tokens.
        logprobs_result: the log probability of each token (and its top alternatives).
        branch: ``"parallel.child"`` path isolating parallel branches.
        timestamp: seconds since the epoch (float).
        custom_metadata: free-form data for the application.
        output: the value a workflow node produced (``adk_rx.workflow``).
        node_info: the workflow node the event comes from.
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = _JSON_CONFIG

    author: str = ""
    content: types.Content | None = None
    invocation_id: str = ""
    id: str = field(default_factory=new_event_id)
    actions: EventActions = EMPTY_ACTIONS
    long_running_tool_ids: frozenset[str] | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    error_code: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    interrupted: bool | None = None
    input_transcription: types.Transcription | None = None
    output_transcription: types.Transcription | None = None
    model_version: str | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    citation_metadata: types.CitationMetadata | None = None
    avg_logprobs: float | None = None
    logprobs_result: types.LogprobsResult | None = None
    branch: str | None = None
    timestamp: float = field(default_factory=time.time)
    custom_metadata: _Map | None = None
    output: Any = None
    node_info: NodeInfo | None = None

    new_id: ClassVar = staticmethod(new_event_id)

    def __init__(
        self,
        author: str = "",
        content: types.Content | None = None,
        invocation_id: str = "",
        id: str | None = None,  # None: a fresh id (new_event_id)
        actions: EventActions = EMPTY_ACTIONS,
        long_running_tool_ids: frozenset[str] | None = None,
        partial: bool | None = None,
        turn_complete: bool | None = None,
        error_code: str | None = None,
        error_message: str | None = None,
        finish_reason: str | None = None,
        usage_metadata: types.GenerateContentResponseUsageMetadata | None = None,
        interrupted: bool | None = None,
        input_transcription: types.Transcription | None = None,
        output_transcription: types.Transcription | None = None,
        model_version: str | None = None,
        grounding_metadata: types.GroundingMetadata | None = None,
        citation_metadata: types.CitationMetadata | None = None,
        avg_logprobs: float | None = None,
        logprobs_result: types.LogprobsResult | None = None,
        branch: str | None = None,
        timestamp: float | None = None,  # None: now (time.time)
        custom_metadata: Mapping[str, Any] | None = None,
        output: Any = None,
        node_info: NodeInfo | None = None,
    ) -> None:
        # The dataclass's own __init__ for a frozen class stores each field with a call to
        # object.__setattr__ (2.5 us of an event's 3.4). Here a new Event is a _Filling while
        # its fields are stored, plain stores of the same slots, then an Event again; an
        # instance of a subclass (whose layout may differ) is filled through _Through.
        e: Any
        if type(self) is Event:
            _set(self, "__class__", _Filling)
            e = self
        else:
            e = _Through(self)
        e.author = author
        e.content = content
        e.invocation_id = invocation_id
        e.id = new_event_id() if id is None else id
        e.actions = actions
        e.long_running_tool_ids = long_running_tool_ids
        e.partial = partial
        e.turn_complete = turn_complete
        e.error_code = error_code
        e.error_message = error_message
        e.finish_reason = finish_reason
        e.usage_metadata = usage_metadata
        e.interrupted = interrupted
        e.input_transcription = input_transcription
        e.output_transcription = output_transcription
        e.model_version = model_version
        e.grounding_metadata = grounding_metadata
        e.citation_metadata = citation_metadata
        e.avg_logprobs = avg_logprobs
        e.logprobs_result = logprobs_result
        e.branch = branch
        e.timestamp = _now() if timestamp is None else timestamp
        e.custom_metadata = custom_metadata
        e.output = output
        e.node_info = node_info
        if e is self:
            e.__class__ = Event

    def replace(self, **changes: Any) -> Event:
        """Returns a copy with the given fields changed."""
        return dataclasses.replace(self, **changes)

    def __eq__(self, other: object) -> bool:  # field by field, whatever the Event's class
        if not isinstance(other, Event):
            return NotImplemented
        return _fields_of(self) == _fields_of(other)

    def get_function_calls(self) -> list[types.FunctionCall]:
        """The function calls in the content, in order."""
        content = self.content
        if content is None or not content.parts:
            return []
        return [p.function_call for p in content.parts if p.function_call is not None]

    def get_function_responses(self) -> list[types.FunctionResponse]:
        """The function responses in the content, in order."""
        content = self.content
        if content is None or not content.parts:
            return []
        return [p.function_response for p in content.parts if p.function_response is not None]

    def has_trailing_code_execution_result(self) -> bool:
        """True when the last part is a code execution result."""
        content = self.content
        if content is None or not content.parts:
            return False
        return content.parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """True when this event ends the agent's turn.

        An event that skips summarization or carries pending long-running calls is final.
        Otherwise it is final when it is complete (not partial), has no function calls or
        responses and does not end with a code execution result.
        """
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        if self.partial:
            return False
        content = self.content
        if content is None or not content.parts:
            return True
        # One pass over the parts (the LLM loop asks this of every event it emits).
        for part in content.parts:
            if part.function_call is not None or part.function_response is not None:
                return False
        return content.parts[-1].code_execution_result is None

    def has_pending_long_running_tool_call(self) -> bool:
        """True when a function call of this event is listed as long-running."""
        ids = self.long_running_tool_ids
        return bool(ids) and any(c.id in ids for c in self.get_function_calls())

    def text(self) -> str:
        """The concatenated non-thought text of the content ('' when there is none)."""
        content = self.content
        if content is None or not content.parts:
            return ""
        return "".join(p.text for p in content.parts if p.text and not p.thought)

    def stringify_content(self) -> str:
        """The content as one string: its text, or its JSON when it has no text."""
        if self.content is None:
            return ""
        text = self.text()
        if text:
            return text
        return self.content.model_dump_json(exclude_none=True, by_alias=True)

    def to_json(self) -> str:
        """Serialises the event (camelCase keys, ``None`` fields left out)."""
        return _EVENT_ADAPTER.dump_json(self, by_alias=True, exclude_none=True).decode()

    def to_dict(self) -> dict[str, Any]:
        """The JSON-compatible dict of :meth:`to_json`."""
        return _EVENT_ADAPTER.dump_python(self, mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_json(cls, data: str | bytes) -> Event:
        """Parses an event written by :meth:`to_json` (snake_case keys accepted too)."""
        return _EVENT_ADAPTER.validate_json(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        """Builds an event from a JSON-compatible dict."""
        return _EVENT_ADAPTER.validate_python(dict(data))

    def __repr__(self) -> str:  # short: events show up in test failures a lot
        body = json.dumps(self.stringify_content())[:80]
        return f"Event(author={self.author!r}, content={body}, id={self.id[:8]})"


_set = object.__setattr__
_now = time.time


class _Filling(Event):
    """A new Event while :meth:`Event.__init__` stores its fields: the same slots (it adds
    none), with object's plain ``__setattr__`` and ``__delattr__`` instead of the frozen ones
    (both: they share one C slot, which is object's own only when neither is Python's)."""

    __slots__ = ()
    __setattr__ = object.__setattr__  # pyright: ignore[reportAssignmentType]
    __delattr__ = object.__delattr__  # pyright: ignore[reportAssignmentType]


class _Through:
    """Stores the fields of an instance of an Event subclass, one ``object.__setattr__``
    each, as the dataclass's own ``__init__`` does."""

    __slots__ = ("_target",)

    def __init__(self, target: Event) -> None:
        _set(self, "_target", target)

    def __setattr__(self, name: str, value: Any) -> None:
        _set(self._target, name, value)


_fields_of = operator.attrgetter(*(f.name for f in dataclasses.fields(Event)))
_EVENT_ADAPTER: pydantic.TypeAdapter[Event] = pydantic.TypeAdapter(Event)
