"""simplify_events: event sequences as short strings, for readable assertions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from google.genai import types

from adk_rx.events import Event

__all__ = ["simplify_content", "simplify_events"]


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _part(part: types.Part) -> str:
    if part.function_call is not None:
        return f"FunctionCall({part.function_call.name}, {_json(part.function_call.args or {})})"
    if part.function_response is not None:
        response = part.function_response
        return f"FunctionResponse({response.name}, {_json(response.response or {})})"
    if part.text is not None:
        return part.text
    if part.inline_data is not None:
        return f"Blob({part.inline_data.mime_type})"
    return "[UNKNOWN_PART]"


def simplify_content(content: types.Content | None) -> str:
    """One content as a string: its part, or ``[a, b]`` for several, ``[NO_CONTENT]``."""
    if content is None or not content.parts:
        return "[NO_CONTENT]"
    parts = [_part(p) for p in content.parts if not p.thought]
    if len(parts) == 1:
        return parts[0]
    return "[" + ", ".join(parts) + "]"


def simplify_events(events: Iterable[Event]) -> list[str]:
    """``["author: text", "author: FunctionCall(name, {args})", ...]`` for each event.

    An event without content but with an error code reads ``"author: [ERROR_CODE]"``.
    """
    out = []
    for event in events:
        if (event.content is None or not event.content.parts) and event.error_code:
            out.append(f"{event.author}: [{event.error_code}]")
        else:
            out.append(f"{event.author}: {simplify_content(event.content)}")
    return out
