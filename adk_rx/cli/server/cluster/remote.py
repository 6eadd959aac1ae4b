"""What a server knows of an invocation another server runs: its Redis record and its stream.

:class:`RemoteInvocation` is the record (``P:inv:{id}``) as :meth:`Broker.find` reads it;
:func:`remote_frames` serves the invocation's SSE stream from its Redis stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adk_rx.errors import BrokerUnavailableError

if TYPE_CHECKING:
    from .broker import Broker

__all__ = ["RemoteInvocation", "float_of", "head_of", "remote_frames"]

_log = logging.getLogger("adk_rx.server.broker")
PING = b": ping\n\n"
RETRY_FIRST = 0.1
RETRY_LONGEST = 2.0


@dataclass(frozen=True, slots=True)
class RemoteInvocation:
    """An invocation as Redis describes it (owned by this server or another one)."""

    invocation_id: str
    key: tuple[str, str, str]
    owner: str
    status: str
    error: str | None
    head: int
    created_at: float | None
    finished_at: float | None
    stored: list[int] | None = None  # set when its events were never published

    @classmethod
    def of_record(
        cls, invocation_id: str, meta: dict[str, str], newest: list[Any]
    ) -> RemoteInvocation:
        """The invocation of a Redis record (its hash and its stream's newest entry)."""
        return cls(
            invocation_id=invocation_id,
            key=(meta.get("app", ""), meta.get("user", ""), meta.get("session", "")),
            owner=meta.get("owner", ""),
            status=meta.get("status", "running"),
            error=meta.get("error") or None,
            head=head_of(meta, newest),
            created_at=float_of(meta.get("created_at")),
            finished_at=float_of(meta.get("finished_at")),
            stored=json.loads(meta["stored"]) if meta.get("stored") else None,
        )

    def status_dict(self) -> dict[str, Any]:
        """The invocations routes' status object."""
        return {
            "invocation_id": self.invocation_id,
            "status": self.status,
            "error": self.error,
            "last_event_id": self.head,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
        }


def float_of(value: str | None) -> float | None:
    return float(value) if value not in (None, "") else None


def head_of(meta: dict[str, str], newest: list[Any]) -> int:
    """The cursor of an invocation's newest event: written at its end, else the stream's
    last entry id (entries are written without touching the hash)."""
    if meta.get("finished_at") or not newest:
        return int(meta.get("head") or 0)
    entry_id, fields = newest[0]
    seq = int(str(entry_id).partition("-")[2])
    return seq - 1 if "end" in fields else seq


async def remote_frames(
    broker: Broker, invocation_id: str, after: int, heartbeat: float, batch: int
) -> AsyncIterator[bytes]:
    """The invocations SSE stream of an invocation, read from its Redis stream.

    The same frames as a reader of the owner's log gets: ``id: <cursor>`` + ``data:``
    per event, ``: ping`` after ``heartbeat`` seconds of silence, ``event: gap`` for
    entries trimmed before the reader got them, and ``event: end``. A Redis failure is
    retried (with pings to the client meanwhile) from the same cursor.
    """
    stream = broker.stream_key(invocation_id)
    cursor = after
    wait = RETRY_FIRST
    block = max(1, int(heartbeat * 1000))
    while True:
        try:
            answer = await broker.redis.xread({stream: f"0-{cursor}"}, count=batch, block=block)
            wait = RETRY_FIRST
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.warning("broker: reading invocation %s failed: %s", invocation_id, exc)
            yield PING
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_LONGEST)
            continue
        if not answer:
            # Nothing new: the run is quiet, or it ended before this cursor (a cursor
            # past the end entry), or its keys expired.
            try:
                known = await broker.find(invocation_id)
            except BrokerUnavailableError:
                yield PING
                continue
            if known is None or known.finished_at is not None:
                status = "expired" if known is None else known.status
                error = None if known is None else known.error
                end = {"invocation_id": invocation_id, "status": status, "error": error}
                yield f"event: end\ndata: {json.dumps(end)}\n\n".encode()
                return
            yield PING
            continue
        chunks: list[str] = []
        ended: str | None = None
        for entry_id, fields in answer[0][1]:
            seq = int(entry_id.partition("-")[2])
            if "end" in fields:
                ended = fields["end"]
                break
            if seq > cursor + 1:
                gap = json.dumps({"from": cursor + 1, "to": seq - 1})
                chunks.append(f"event: gap\ndata: {gap}\n\n")
            chunks.append(f"id: {seq}\ndata: {fields['e']}\n\n")
            cursor = seq
        if chunks:
            yield "".join(chunks).encode()
        if ended is not None:
            yield f"event: end\ndata: {ended}\n\n".encode()
            return
