"""The event of a streamed chunk, made in four stores instead of a full Event's 25.

A streamed model call emits one event per chunk, and every field but the content and the
timestamp is the same for all of them or read from the chunk's own response. So a chunk's
event stores its response, its content, its timestamp and a :class:`ChunkCall` (the id,
author, invocation id, branch and actions its model call's chunks share), and reads the
other fields from those when asked.

It is an :class:`~adk_rx.events.Event` in every way a reader sees: ``isinstance`` holds, each
field reads as a full event's would, it is equal to (and hashes as) the Event with the same
fields, serialises to the same JSON, and ``replace``, ``dataclasses.replace``, ``copy`` and
``pickle`` give a plain Event. Only ``type(event) is Event`` tells them apart.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Sequence
from typing import Any, Protocol

from google.genai import types

from adk_rx.events import Event, EventActions, new_event_id
from adk_rx.models.llm_response import LlmResponse

__all__ = ["CHUNK_EVENT", "RUN_AT_MOST", "CallChunks", "ChunkCall", "chunk_event", "chunk_of"]


class ChunkCall:
    """The fields every chunk of one model call shares (until the call's id changes)."""

    __slots__ = ("_json", "actions", "author", "branch", "id", "invocation_id")

    def __init__(
        self, id: str, author: str, invocation_id: str, branch: str | None, actions: EventActions
    ) -> None:
        self.id = id
        self.author = author
        self.invocation_id = invocation_id
        self.branch = branch
        self.actions = actions
        self._json: tuple[str, str] | None = None

    def json_parts(self) -> tuple[str, str]:
        """The JSON of a plain chunk's event around its content and timestamp, made once:
        ``head + ',"content":' + content + tail + timestamp + '}'``."""
        parts = self._json
        if parts is None:
            template = Event(
                author=self.author,
                invocation_id=self.invocation_id,
                id=self.id,
                branch=self.branch,
                actions=self.actions,
                partial=True,
                timestamp=0.5,
            ).to_json()
            # The content goes right after the author (the fields' order); inside a JSON
            # string a quote is escaped, so the first such key is the field's.
            cut = template.index(',"invocationId":')
            end = ',"timestamp":0.5}'
            assert template.endswith(end)  # nothing after the timestamp: no such field set
            parts = self._json = (template[:cut], template[cut : -len("0.5}")])
        return parts


def _from_response(name: str) -> Any:
    """A field a chunk's event reads from its response (as model_event copies it)."""
    return property(operator.attrgetter(f"_response.{name}"))


def _from_call(name: str) -> Any:
    """A field a chunk's event reads from the fields its call's chunks share."""
    return property(operator.attrgetter(f"_call.{name}"))


_CHUNK_RESPONSE_FIELDS = (
    "turn_complete",
    "error_code",
    "error_message",
    "finish_reason",
    "usage_metadata",
    "interrupted",
    "output_transcription",
    "custom_metadata",
    "model_version",
    "grounding_metadata",
    "citation_metadata",
    "avg_logprobs",
    "logprobs_result",
)
_RESPONSE_FIELDS = operator.attrgetter(*_CHUNK_RESPONSE_FIELDS)
_NO_FIELDS = (None,) * len(_CHUNK_RESPONSE_FIELDS)


# A chunk carries no workflow output and comes from no workflow node: the slots of those two
# fields hold its response and its call's shared fields instead. Adding no slot of its own,
# a chunk's event is two slots smaller and its class swap (``_Building`` to ``_Chunk``)
# skips the comparison of the slots each class adds.
_RESPONSE_SLOT: Any = Event.__dict__["output"]
_CALL_SLOT: Any = Event.__dict__["node_info"]


class _Chunk(Event):
    """A streamed chunk's event: the fields it does not store come from its class (those no
    chunk has), from its call's shared fields or from its response (read when asked)."""

    __slots__ = ()
    _response = _RESPONSE_SLOT
    _call = _CALL_SLOT

    # A chunk is partial, calls no function and carries no workflow output.
    partial = True
    long_running_tool_ids = None
    input_transcription = None
    output = None
    node_info = None

    id = _from_call("id")
    author = _from_call("author")
    invocation_id = _from_call("invocation_id")
    branch = _from_call("branch")
    actions = _from_call("actions")

    turn_complete = _from_response("turn_complete")
    error_code = _from_response("error_code")
    error_message = _from_response("error_message")
    finish_reason = _from_response("finish_reason")
    usage_metadata = _from_response("usage_metadata")
    interrupted = _from_response("interrupted")
    output_transcription = _from_response("output_transcription")
    custom_metadata = _from_response("custom_metadata")
    model_version = _from_response("model_version")
    grounding_metadata = _from_response("grounding_metadata")
    citation_metadata = _from_response("citation_metadata")
    avg_logprobs = _from_response("avg_logprobs")
    logprobs_result = _from_response("logprobs_result")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Built by its fields (``dataclasses.replace``, ``copy``, unpickling), it is an Event.
        return Event(*args, **kwargs)

    def to_json(self) -> str:
        """As :meth:`Event.to_json`; for a plain chunk (its response has no field but the
        content and ``partial``) the fields its call's chunks share are serialised once, and
        only its content and timestamp each time (an SSE server sends every chunk)."""
        if _RESPONSE_FIELDS(self._response) != _NO_FIELDS:
            return Event.to_json(self)
        head, tail = self._call.json_parts()
        content = self.content.model_dump_json(by_alias=True, exclude_none=True)  # pyright: ignore[reportOptionalMemberAccess]
        return f'{head},"content":{content}{tail}{self.timestamp!r}}}'


class _Building(Event):
    """A chunk's event while its four fields are stored: a frozen Event's stores cost a call
    each, this class's are plain (its ``__setattr__`` is object's); then it becomes a
    ``_Chunk``, whose layout is the same (Event's: neither adds a slot).

    Made by calling the class, whose ``__init__`` is object's: calling ``object.__new__``
    instead costs an arguments tuple (about 270 machine instructions of a chunk's 8,200)."""

    __slots__ = ()
    _response = _RESPONSE_SLOT
    _call = _CALL_SLOT
    __init__ = object.__init__  # pyright: ignore[reportAssignmentType]
    __setattr__ = object.__setattr__  # pyright: ignore[reportAssignmentType]
    __delattr__ = object.__delattr__  # pyright: ignore[reportAssignmentType]


RUN_AT_MOST = 64
"""The most chunks :meth:`CallChunks.run_of` makes at once (far fewer than the allocations
that start a collection of the GC's youngest generation, 700)."""

CHUNK_EVENT: type[Event] = _Chunk
"""The class of every light chunk event: partial, never applied to a session nor stored."""

_now = time.time


def chunk_event(
    response: LlmResponse,
    content: types.Content,
    *,
    id: str,
    author: str,
    invocation_id: str,
    branch: str | None,
    actions: EventActions,
) -> Event:
    """The partial event of a streamed chunk ``response`` whose ``content`` calls no function.

    Equal to ``Event(id=id, author=author, invocation_id=invocation_id, branch=branch,
    content=content, actions=actions, partial=True, <each field of the response>)``.
    """
    return chunk_of(response, content, ChunkCall(id, author, invocation_id, branch, actions))


def chunk_of(response: LlmResponse, content: types.Content, call: ChunkCall) -> Event:
    """:func:`chunk_event` with the fields of ``call``, shared with its call's other chunks."""
    event = _Building()
    event._response = response
    event._call = call
    event.content = content  # pyright: ignore[reportAttributeAccessIssue]
    event.timestamp = _now()  # pyright: ignore[reportAttributeAccessIssue]
    event.__class__ = _Chunk  # pyright: ignore[reportAttributeAccessIssue]
    return event


class _Ids(Protocol):
    value: str | None  # the id of the call's next response (its chunks share it), once drawn


class CallChunks:
    """Makes the events of one model call's plain streamed chunks, each in one call.

    Args:
        ids: the call's response ids (``ResponseIds``): a chunk takes ``ids.value`` (drawn
            here when a complete response took the one before).
        author, invocation_id, branch, actions: every chunk's (the actions are frozen:
            nothing may record more of them while the call streams).
    """

    __slots__ = ("_call", "_ids")

    def __init__(
        self, ids: _Ids, author: str, invocation_id: str, branch: str | None, actions: EventActions
    ) -> None:
        self._ids = ids
        value = ids.value
        if value is None:
            value = ids.value = new_event_id()
        self._call = ChunkCall(value, author, invocation_id, branch, actions)

    def _current(self) -> ChunkCall:
        """The shared fields of the chunks of the call's next response."""
        call = self._call
        value = self._ids.value
        if value is None:  # a complete response took the id: the next one's chunks
            value = self._ids.value = new_event_id()
        if call.id is not value:
            call = self._call = ChunkCall(
                value, call.author, call.invocation_id, call.branch, call.actions
            )
        return call

    def of(self, response: LlmResponse) -> Event | None:
        """The event of ``response`` when it is a plain streamed chunk (partial, with content
        that calls no function), as ``model_event`` makes it; None for any other response."""
        if response.partial is not True:
            return None
        content = response.content
        if content is None:
            return None
        parts = content.parts
        if parts:
            for part in parts:
                if part.function_call is not None:
                    return None
        call = self._call
        value = self._ids.value
        if value is None:  # a complete response took the id: the next one's chunks
            value = self._ids.value = new_event_id()
        if call.id is not value:
            call = self._call = ChunkCall(
                value, call.author, call.invocation_id, call.branch, call.actions
            )
        event = _Building()  # as chunk_of, inline
        event._response = response
        event._call = call
        event.content = content  # pyright: ignore[reportAttributeAccessIssue]
        event.timestamp = _now()  # pyright: ignore[reportAttributeAccessIssue]
        event.__class__ = _Chunk  # pyright: ignore[reportAttributeAccessIssue]
        return event

    def run_of(self, responses: Sequence[LlmResponse], start: int) -> tuple[tuple[Event, ...], int]:
        """The events of the plain streamed chunks from ``responses[start]`` on (each as
        :meth:`of` makes it), and the index of the first response that is not one; at most
        :data:`RUN_AT_MOST` of them (the index is then that of the next chunk).

        One call for a run of chunks: a model that answered at once has them all here, so
        they share the timestamp of their arrival. A long stream is cut in such runs so that
        each run's events can be released once emitted, before the next run is made: held
        all at once, a 1,000-chunk stream's events outlive several collections of the cyclic
        GC, which visits each of their 25 slots every time."""
        events: list[Event] = []
        append = events.append
        call = self._current()  # no complete response comes between two chunks of a run
        now = _now()
        for response in responses[start : start + RUN_AT_MOST]:
            content = response.content
            if response.partial is not True or content is None:
                break
            for part in content.parts or ():
                if part.function_call is not None:
                    break
            else:  # no part calls a function: a plain chunk
                event = _Building()  # as chunk_of, inline
                event._response = response
                event._call = call
                event.content = content  # pyright: ignore[reportAttributeAccessIssue]
                event.timestamp = now  # pyright: ignore[reportAttributeAccessIssue]
                event.__class__ = _Chunk  # pyright: ignore[reportAttributeAccessIssue]
                append(event)
                continue
            break
        return tuple(events), start + len(events)
