"""Events: the immutable values an invocation produces.

An :class:`Event` is one thing that happened in a session: a user message, a model reply
(or a streamed chunk of one), a tool's response. State changes never mutate anything in
place: they ride on the event as ``actions.state_delta`` and the Runner applies them when it
persists the event.

Events and their actions (``adk_rx.event_actions``, re-exported here) are frozen, slotted
dataclasses: assigning a field raises, and an event costs a few hundred bytes (a streamed
chunk's, less: ``adk_rx.flows.light_event``). JSON uses ADK's camelCase keys
(``invocationId``, ``stateDelta``...) and accepts snake_case on input.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from random import getrandbits
from typing import Any, ClassVar

import pydantic
from google.genai import types

from adk_rx.event_actions import (
    CONFIRMATION_FUNCTION,
    CREDENTIAL_FUNCTION,
    EMPTY_ACTIONS,
    JSON_CONFIG,
    PAUSE_FUNCTIONS,
    ActionMap,
    EventActions,
    EventCompaction,
    NodeInfo,
    RouteValue,
    ToolConfirmation,
)

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

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = JSON_CONFIG

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
    custom_metadata: ActionMap | None = None
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
