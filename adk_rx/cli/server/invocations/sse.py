"""Server-sent event streams of an invocation log.

Two wire formats:

* the invocations stream: ``id: <cursor>`` + ``data: <Event JSON>`` per event, ``: ping``
  comments after ``Limits.heartbeat`` seconds of silence, ``event: gap`` when the reader's
  cursor fell out of the log's window, and a last ``event: end`` frame whose data is
  ``{"invocation_id", "status", "error"}``;
* ADK's ``/run_sse``: bare ``data: <Event JSON>`` frames, and
  ``data: {"error": ..., "error_details": {...}}`` when the run fails (what ADK clients parse).

Flow control: each client reads the shared log at its own pace. A send waits while the
client's socket buffer is full (the ASGI server's flow control), so a client holds at most
one batch of frames plus the transport's buffer; the run and the other clients never wait
for it. A client that falls more than the log's length behind gets a ``gap`` frame.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from .log import Entry, InvocationLog

__all__ = ["adk_frames", "error_payload", "invocation_frames", "sse_response"]

PING = b": ping\n\n"


def _data_frame(payload: str) -> str:
    # Event JSON has no raw newlines (json escapes them), so one data line per frame.
    return f"data: {payload}\n\n"


def end_frame(log: InvocationLog) -> bytes:
    """The last frame of an invocations stream."""
    return end_frame_of(log.invocation_id, log.status, log.error)


def end_frame_of(invocation_id: str | None, status: str, error: str | None) -> bytes:
    """The ``end`` frame with the invocation's id, status and error."""
    data = json.dumps({"invocation_id": invocation_id, "status": status, "error": error})
    return f"event: end\ndata: {data}\n\n".encode()


async def invocation_frames(
    log: InvocationLog, after: int, heartbeat: float, batch: int
) -> AsyncIterator[bytes]:
    """The invocations stream of ``log`` from the entry after cursor ``after``."""
    cursor = after
    while True:
        read = log.read_after(cursor, batch)
        chunks: list[str] = []
        if read.gap is not None:
            first, last = read.gap
            chunks.append(f"event: gap\ndata: {json.dumps({'from': first, 'to': last})}\n\n")
        for entry in read.entries:
            chunks.append(f"id: {entry.seq}\n{_data_frame(entry.json)}")
            cursor = entry.seq
        if chunks:
            yield "".join(chunks).encode()
        if read.finished:
            yield end_frame(log)
            return
        if not read.entries and not await log.wait(heartbeat):
            yield PING


async def adk_frames(
    log: InvocationLog, batch: int, split_artifacts: bool = True
) -> AsyncIterator[bytes]:
    """ADK's ``/run_sse`` stream of ``log``: ``data:`` frames only.

    As in google-adk, an event carrying both content and an artifact delta goes out as two
    frames (the event without the delta, then the event without the content), since its UI
    renders artifacts from content-less events; ``split_artifacts=False`` (a run answering a
    function call, ``function_call_event_id`` in the body) sends it whole.
    """
    cursor = 0
    while True:
        read = log.read_after(cursor, batch)
        if read.entries:
            cursor = read.entries[-1].seq
            yield "".join(_adk_frame(entry, split_artifacts) for entry in read.entries).encode()
        if read.finished:
            if log.status not in ("completed", "cancelled"):
                yield _data_frame(json.dumps(error_payload(log))).encode()
            return
        if not read.entries:
            await log.wait(None)


def _adk_frame(entry: Entry, split_artifacts: bool) -> str:
    event = entry.event
    content = event.content
    if not (split_artifacts and event.actions.artifact_delta and content and content.parts):
        return _data_frame(entry.json)
    without_delta = event.replace(actions=event.actions.replace(artifact_delta={}))
    without_content = event.replace(content=None)
    return _data_frame(without_delta.to_json()) + _data_frame(without_content.to_json())


def error_payload(log: InvocationLog) -> dict[str, Any]:
    """google-adk's error frame: ``{"error": "Type: message", "error_details": {...}}``."""
    error = log.error or log.status
    kind, sep, message = error.partition(": ")
    return {
        "error": error,
        "error_details": {
            "error_type": kind if sep else log.status,
            "error_message": message if sep else error,
            "timestamp": log.finished_at,
        },
    }


def sse_response(frames: AsyncIterator[bytes]) -> StreamingResponse:
    """A ``text/event-stream`` response that proxies do not buffer."""
    return StreamingResponse(
        frames,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
