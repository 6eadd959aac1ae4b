"""google-genai parts <-> A2A parts, as google-adk 2.13 converts them.

Text stays text (a thought carries ``adk_thought`` in the part's metadata); a file is a URL
or raw bytes with its media type; function calls and responses, code and its results become
data parts tagged ``adk_type``; any other data part arrives as JSON wrapped in
``<a2a_datapart_json>`` tags inside an inline text blob, and leaves again as that data part.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from a2a.types import Part
from google.genai import types
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct, Value

from adk_rx.a2a.keys import DATA_TYPE, adk_key

__all__ = ["from_a2a_part", "struct", "struct_dict", "to_a2a_part"]

_THOUGHT = adk_key("thought")
_SIGNATURE = adk_key("thought_signature")
_BLOB_MIME = "text/plain"
_BLOB_START = b"<a2a_datapart_json>"
_BLOB_END = b"</a2a_datapart_json>"
# genai part field -> the data part's adk_type, in the order google-adk tries them.
_DATA_FIELDS = (
    ("function_call", "function_call", types.FunctionCall),
    ("function_response", "function_response", types.FunctionResponse),
    ("code_execution_result", "code_execution_result", types.CodeExecutionResult),
    ("executable_code", "executable_code", types.ExecutableCode),
)


def struct(data: dict[str, Any]) -> Struct:
    """A protobuf Struct holding ``data`` (numbers become floats, as protobuf has no ints)."""
    return ParseDict(data, Struct())


def struct_dict(message: Any) -> dict[str, Any]:
    """A Struct (or a message field holding one) as a plain dict; {} for an empty one."""
    return MessageToDict(message) if message is not None else {}


def to_a2a_part(part: types.Part) -> Part | None:
    """The A2A part for a genai part; None for one A2A cannot carry (an empty blob, ...)."""
    meta: dict[str, Any] = dict(part.part_metadata or {})
    if part.text is not None:
        if part.thought is not None:
            meta[_THOUGHT] = part.thought
        return _with_meta(Part(text=part.text), meta)
    if part.file_data is not None:
        found = Part(url=part.file_data.file_uri or "", media_type=part.file_data.mime_type or "")
        if part.file_data.display_name:
            found.filename = part.file_data.display_name
        return _with_meta(found, meta)
    blob = part.inline_data
    if blob is not None:
        data = blob.data
        if data is None:
            return None
        if (
            blob.mime_type == _BLOB_MIME
            and data.startswith(_BLOB_START)
            and data.endswith(_BLOB_END)
        ):
            inner = json.loads(data[len(_BLOB_START) : -len(_BLOB_END)])
            return _with_meta(_data_part(inner), meta)
        found = Part(raw=data, media_type=blob.mime_type or "")
        if blob.display_name:
            found.filename = blob.display_name
        return _with_meta(found, meta)
    for attr, kind, _ in _DATA_FIELDS:
        value = getattr(part, attr)
        if value is not None:
            meta[DATA_TYPE] = kind
            if part.thought_signature is not None:
                meta[_SIGNATURE] = base64.b64encode(part.thought_signature).decode()
            dumped = value.model_dump(mode="json", by_alias=True, exclude_none=True)
            return _with_meta(_data_part(dumped), meta)
    return None


def from_a2a_part(part: Part) -> types.Part | None:
    """The genai part for an A2A part; None for an empty one."""
    meta = struct_dict(part.metadata) if part.HasField("metadata") else {}
    kind = part.WhichOneof("content")
    if kind == "text":
        return types.Part(text=part.text, thought=meta.get(_THOUGHT))
    if kind == "url":
        file = types.FileData(
            file_uri=part.url, mime_type=part.media_type or None, display_name=part.filename or None
        )
        return types.Part(file_data=file)
    if kind == "raw":
        blob = types.Blob(
            data=part.raw, mime_type=part.media_type or None, display_name=part.filename or None
        )
        return types.Part(inline_data=blob)
    if kind != "data":
        return None
    data = MessageToDict(part.data)
    for _, tag, model in _DATA_FIELDS:
        if meta.get(DATA_TYPE) == tag and isinstance(data, dict):
            fields: dict[str, Any] = {
                tag: model.model_validate(data, by_alias=True),
                "thought_signature": _signature(meta),
            }
            return types.Part(**fields)
    wrapped = _BLOB_START + json.dumps(data).encode() + _BLOB_END
    return types.Part(inline_data=types.Blob(data=wrapped, mime_type=_BLOB_MIME))


def _data_part(data: Any) -> Part:
    value = ParseDict(data, Value())
    return Part(data=value)


def _with_meta(part: Part, meta: dict[str, Any]) -> Part:
    if meta:
        part.metadata.CopyFrom(struct(meta))
    return part


def _signature(meta: dict[str, Any]) -> bytes | None:
    raw = meta.get(_SIGNATURE)
    if not isinstance(raw, str):
        return None
    try:
        return base64.b64decode(raw)
    except ValueError:
        return None  # a peer's malformed signature is dropped, not fatal
