"""Builders for a scripted Anthropic Messages API: complete messages and SSE event streams."""

from __future__ import annotations

import json
from typing import Any

from ._fakes import Reply, json_reply, sse_reply

USAGE = {"input_tokens": 9, "output_tokens": 3}


def message(*blocks: dict[str, Any], stop: str = "end_turn", **usage: int) -> Reply:
    """A complete ``message`` answer holding ``blocks``."""
    return json_reply(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": list(blocks),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {**USAGE, **usage},
        }
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def event(kind: str, **data: Any) -> str:
    """One SSE event as Claude sends it (``event:`` line and ``data:`` line)."""
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def start(**usage: int) -> str:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**USAGE, "output_tokens": 1, **usage},
    }
    return event("message_start", message=body)


def block_start(index: int, block: dict[str, Any]) -> str:
    return event("content_block_start", index=index, content_block=block)


def delta(index: int, kind: str, **fields: Any) -> str:
    return event("content_block_delta", index=index, delta={"type": kind, **fields})


def block_stop(index: int) -> str:
    return event("content_block_stop", index=index)


def finish(stop: str = "end_turn", output_tokens: int = 3) -> list[str]:
    return [
        event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        event("message_stop"),
    ]


def streamed(frames: list[str], **options: Any) -> Reply:
    return sse_reply(frames, **options)


def streamed_text(value: str) -> Reply:
    """A streamed answer of one text block, sent in two deltas."""
    half = len(value) // 2
    return streamed(
        [
            start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, "text_delta", text=value[:half]),
            delta(0, "text_delta", text=value[half:]),
            block_stop(0),
            *finish(),
        ]
    )
