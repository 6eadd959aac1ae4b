"""How an artifact Part is stored: its bytes plus a little metadata, in every durable store.

Inline data keeps its bytes, MIME type and display name; text is kept as UTF-8; anything else
(file data, function calls...) as the Part's own JSON.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

__all__ = ["decode_part", "encode_part", "is_rewind_marker", "rewind_marker"]


def encode_part(part: types.Part) -> tuple[bytes, dict[str, Any]]:
    """The bytes to store and the metadata (``kind``, ``mime_type``, ...) that rebuild it."""
    if part.inline_data is not None and part.inline_data.data is not None:
        blob = part.inline_data
        meta: dict[str, Any] = {"kind": "inline_data", "mime_type": blob.mime_type}
        if blob.display_name:
            meta["display_name"] = blob.display_name
        return blob.data or b"", meta
    if part.text is not None and not part.thought:
        return part.text.encode(), {"kind": "text", "mime_type": "text/plain"}
    # Anything else (file_data, function calls...) is kept as the Part's own JSON.
    return part.model_dump_json(exclude_none=True).encode(), {
        "kind": "part",
        "mime_type": "application/json",
    }


def decode_part(data: bytes, meta: dict[str, Any]) -> types.Part:
    """The Part :func:`encode_part` stored as ``data`` and ``meta``."""
    kind = meta.get("kind")
    if kind == "inline_data":
        blob = types.Blob(
            data=data, mime_type=meta.get("mime_type"), display_name=meta.get("display_name")
        )
        return types.Part(inline_data=blob)
    if kind == "text":
        return types.Part(text=data.decode())
    return types.Part.model_validate_json(data)


def rewind_marker() -> types.Part:
    """The part a rewind saves over a file that did not exist before the rewound invocation
    (google-adk's marker: an empty ``application/octet-stream`` blob); it loads as absent."""
    return types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=b""))


def is_rewind_marker(part: types.Part) -> bool:
    """True for the part :func:`rewind_marker` makes (what a load treats as no file)."""
    blob = part.inline_data
    return (
        blob is not None
        and not blob.data
        and blob.mime_type == "application/octet-stream"
        and part.text is None
        and part.file_data is None
    )
