"""The event of a streamed chunk, made in a few stores instead of a full Event's 25.

A streamed model call emits one event per chunk, and every field but the content, the id
and the timestamp is the same for all of them or read from the chunk's own response. So
:func:`chunk_event` stores those few (and the call's author, invocation id, branch and
actions, shared objects) and reads the response's fields (finish reason, usage, metadata...)
from the response when asked.

It is an :class:`~adk_rx.events.Event` in every way a reader sees: ``isinstance`` holds, each
field reads as a full event's would, it is equal to (and hashes as) the Event with the same
fields, serialises to the same JSON, and ``replace``, ``dataclasses.replace``, ``copy`` and
``pickle`` give a plain Event. Only ``type(event) is Event`` tells them apart.
"""

from __future__ import annotations

import operator
import time
from typing import Any

from google.genai import types

from adk_rx.events import Event, EventActions
from adk_rx.models.llm_response import LlmResponse

__all__ = ["chunk_event"]


def _from_response(name: str) -> Any:
    """A field a chunk's event reads from its response (as model_event copies it)."""
    return property(operator.attrgetter(f"_response.{name}"))


class _Chunk(Event):
    """A streamed chunk's event: the fields it does not store come from its class (those no
    chunk has) or from its response (read when asked)."""

    __slots__ = ("_response",)

    # A chunk is partial, calls no function and carries no workflow output.
    partial = True
    long_running_tool_ids = None
    input_transcription = None
    output = None
    node_info = None

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


_new = object.__new__
_store = object.__setattr__
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
    event = _new(_Chunk)
    _store(event, "_response", response)
    _store(event, "content", content)
    _store(event, "id", id)
    _store(event, "author", author)
    _store(event, "invocation_id", invocation_id)
    _store(event, "branch", branch)
    _store(event, "actions", actions)
    _store(event, "timestamp", _now())
    return event
