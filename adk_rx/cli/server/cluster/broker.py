"""Invocation logs, cancels and liveness on Redis, for several server processes.

With ``--broker-url redis://...`` every server-owned invocation is published to Redis, so a
client routed to any server process can stream and cancel it. Redis is transient; the
session store (PostgreSQL) stays the truth: losing Redis loses no stored event.

Keys (``P`` is the key prefix, ``adk_rx`` by default)::

    P:inv:{id}            hash: app, user, session, owner, status, error, head, times
    P:inv:{id}:events     stream: one entry per log entry, id "0-<cursor>", then the end entry
    P:replica:{rid}       a server's heartbeat (a key with a TTL)
    P:replicas            set of server ids that may own runs
    P:running:{rid}       hash: invocation id -> session of the runs a server owns
    P:claim:{id}          who recovers the invocation of a server that died (SET NX)
    P:cancel              pub/sub channel of cancel requests (the invocation id)

The owner publishes by reading its own in-process log at its own pace (like any reader), so a
slow or failing Redis never slows the run: a failed write is logged and retried, and the run
goes on. Entry ids are the log's cursors, so the SSE ``id:`` / ``after=`` cursors are the same
on every server. Readers elsewhere read the stream with ``XREAD BLOCK``.

Liveness (heartbeats, and what another server does when one dies) is in
:mod:`adk_rx.cli.server.cluster.broker_liveness`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from adk_rx.errors import BrokerUnavailableError, ConfigurationError

from ..invocations.log import InvocationLog

__all__ = ["Broker", "RemoteInvocation"]

_log = logging.getLogger("adk_rx.server.broker")
PING = b": ping\n\n"
RETRY_FIRST = 0.1
RETRY_LONGEST = 2.0
ANNOUNCE_WAIT = 1.0
FIND_ATTEMPTS = 5


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


def _float(value: str | None) -> float | None:
    return float(value) if value not in (None, "") else None


def _head(meta: dict[str, str], newest: list[Any]) -> int:
    """The cursor of an invocation's newest event: written at its end, else the stream's
    last entry id (entries are written without touching the hash)."""
    if meta.get("finished_at") or not newest:
        return int(meta.get("head") or 0)
    entry_id, fields = newest[0]
    seq = int(str(entry_id).partition("-")[2])
    return seq - 1 if "end" in fields else seq


class Broker:
    """One server's connection to Redis: publishes its runs, reads and cancels anyone's.

    Args:
        url: ``redis://HOST:PORT/DB`` (or ``rediss://``).
        prefix: the key prefix; servers that serve the same sessions share it.
        max_len: entries kept per invocation stream (approximately, ``MAXLEN ~``).
        expire_after: seconds a finished invocation's keys are kept.
        heartbeat: seconds between a server's heartbeats; it counts as dead after
            ``3 * heartbeat`` seconds without one.

    Raises:
        ConfigurationError: not a ``redis://`` / ``rediss://`` URL, or the ``server`` extra
            (the ``redis`` package) is not installed.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "adk_rx",
        max_len: int = 10_000,
        expire_after: float = 3600.0,
        heartbeat: float = 2.0,
    ) -> None:
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigurationError(f"the broker URL must be redis://HOST:PORT/DB, got {url!r}")
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:
            raise ConfigurationError(
                'a broker needs the redis package: pip install "adk_rx[server]"'
            ) from exc
        self.replica_id = uuid.uuid4().hex[:16]
        self.prefix = prefix
        self.max_len = max_len
        self.expire_after = expire_after
        self.heartbeat = heartbeat
        self.redis: Any = aioredis.Redis.from_url(  # redis-py types every reply loosely
            url,
            decode_responses=True,
            client_name=f"adk-rx:{prefix}:{self.replica_id}",
            socket_connect_timeout=5,
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._publishers: set[asyncio.Task[None]] = set()
        self.closing = False
        self.writes = 0  # pipelined round trips that published events (one per burst)
        self.entries_written = 0  # events published

    # -- keys -----------------------------------------------------------------------------
    def meta_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:inv:{invocation_id}"

    def stream_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:inv:{invocation_id}:events"

    def running_key(self, replica_id: str) -> str:
        return f"{self.prefix}:running:{replica_id}"

    def cancelled_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:cancelled:{invocation_id}"

    def session_key(self, key: tuple[str, str, str]) -> str:
        return f"{self.prefix}:session:{json.dumps(list(key))}"

    @property
    def cancel_channel(self) -> str:
        return f"{self.prefix}:cancel"

    # -- lifecycle ------------------------------------------------------------------------
    def spawn(self, coro: Any) -> asyncio.Task[None]:
        """Runs ``coro`` as a background task of the broker (kept until it ends)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self, grace: float = 5.0, farewell: Any = None) -> None:
        """Lets publishers finish (up to ``grace`` seconds), stops the tasks, awaits
        ``farewell()`` (when given), disconnects."""
        if self._publishers:
            await asyncio.wait(set(self._publishers), timeout=grace)
        self.closing = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if farewell is not None:
            await farewell()
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    # -- publishing -----------------------------------------------------------------------
    async def publish(self, log: InvocationLog) -> None:
        """Publishes a started invocation (its id is known) until its log ends.

        Returns once Redis knows the invocation (so another server finds it as soon as the
        client has its id), or after ``ANNOUNCE_WAIT`` seconds if Redis is slow or down: the
        announcement is then retried in the background and the run goes on.
        """
        announced = asyncio.get_running_loop().create_future()
        task = self.spawn(self._publish(log, announced))
        self._publishers.add(task)
        task.add_done_callback(self._publishers.discard)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(announced), ANNOUNCE_WAIT)

    async def _publish(self, log: InvocationLog, announced: asyncio.Future[None]) -> None:
        invocation_id = log.invocation_id
        assert invocation_id is not None
        app, user, session = log.key
        meta = {
            "app": app,
            "user": user,
            "session": session,
            "owner": self.replica_id,
            "status": "running",
            "error": "",
            "head": "0",
            "created_at": repr(log.created_at),
        }
        running = json.dumps([app, user, session])

        async def begin() -> None:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(self.meta_key(invocation_id), mapping=meta)
                pipe.hset(self.running_key(self.replica_id), invocation_id, running)
                pipe.sadd(self.session_key(log.key), invocation_id)  # listed by every server
                pipe.expire(self.session_key(log.key), int(self.expire_after))
                await pipe.execute()

        try:
            await self.retrying(begin, log, "announcing")
        finally:
            if not announced.done():
                announced.set_result(None)
        cursor = 0
        while True:
            read = log.read_after(cursor, 256)
            if read.entries:
                cursor = await self._append(log, invocation_id, read.entries)
            if read.finished:
                break
            if not read.entries:
                await log.wait(None)
        end = {"invocation_id": invocation_id, "status": log.status, "error": log.error}
        await self.retrying(lambda: self.finish(invocation_id, end, cursor), log, "ending")

    async def _append(self, log: InvocationLog, invocation_id: str, entries: list[Any]) -> int:
        """XADDs ``entries`` (what the log gained since the last write: one burst) in one
        pipelined round trip, without a transaction: each XADD stands alone, a reader needs
        no more, and the stream's last id is the head; returns the new cursor."""
        stream = self.stream_key(invocation_id)
        last = entries[-1].seq

        async def write() -> None:
            async with self.redis.pipeline(transaction=False) as pipe:
                for entry in entries:
                    pipe.xadd(
                        stream,
                        {"i": entry.event.id, "e": entry.json},
                        id=f"0-{entry.seq}",
                        maxlen=self.max_len,
                        approximate=True,
                    )
                answers = await pipe.execute(raise_on_error=False)
            for answer in answers:
                # A retry after an answer that was lost: those entries are there already.
                if isinstance(answer, Exception) and "equal or smaller" not in str(answer):
                    raise answer
            self.writes += 1
            self.entries_written += len(entries)

        await self.retrying(write, log, "publishing events")
        return last

    async def finish(
        self, invocation_id: str, end: dict[str, Any], cursor: int, owner: str | None = None
    ) -> None:
        """Writes the end entry (id ``cursor + 1``), the final status and the expiry, and
        takes the run off its owner's list (this server's, or ``owner``'s)."""
        stream = self.stream_key(invocation_id)
        meta = self.meta_key(invocation_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xadd(stream, {"end": json.dumps(end)}, id=f"0-{cursor + 1}")
            pipe.hset(
                meta,
                mapping={
                    "head": str(cursor),
                    "status": end["status"],
                    "error": end["error"] or "",
                    "finished_at": repr(time.time()),
                },
            )
            pipe.expire(stream, int(self.expire_after))
            pipe.expire(meta, int(self.expire_after))
            pipe.hdel(self.running_key(owner or self.replica_id), invocation_id)
            await pipe.execute()

    async def retrying(self, write: Any, log: InvocationLog | None, what: str) -> bool:
        """Runs ``write()`` until it succeeds; a failure is logged once per outage. Gives up
        (False) once the broker closes, or 30 s after the run ended."""
        wait = RETRY_FIRST
        failed = False
        while True:
            try:
                await write()
                if failed:
                    _log.warning("broker: %s works again", what)
                return True
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not failed:
                    _log.warning("broker: %s failed (the run goes on): %s", what, exc)
                failed = True
            ended_at = log.finished_at if log is not None else None
            if self.closing or (ended_at is not None and time.time() - ended_at > 30):
                _log.warning("broker: gave up %s", what)
                return False
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_LONGEST)

    # -- reading --------------------------------------------------------------------------
    async def find(self, invocation_id: str) -> RemoteInvocation | None:
        """The invocation as Redis knows it; None when it does not.

        Raises:
            BrokerUnavailableError: Redis failed every attempt (about 1.5 s of them).
        """
        wait = RETRY_FIRST
        for attempt in range(FIND_ATTEMPTS):
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.hgetall(self.meta_key(invocation_id))
                    pipe.xrevrange(self.stream_key(invocation_id), count=1)
                    meta, newest = await pipe.execute()
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("broker: looking up invocation %s failed: %s", invocation_id, exc)
                if attempt == FIND_ATTEMPTS - 1:
                    raise BrokerUnavailableError(f"the broker is unreachable: {exc}") from exc
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_LONGEST)
        else:  # pragma: no cover - the loop always breaks or raises
            return None
        if not meta:
            return None
        return RemoteInvocation(
            invocation_id=invocation_id,
            key=(meta.get("app", ""), meta.get("user", ""), meta.get("session", "")),
            owner=meta.get("owner", ""),
            status=meta.get("status", "running"),
            error=meta.get("error") or None,
            head=_head(meta, newest),
            created_at=_float(meta.get("created_at")),
            finished_at=_float(meta.get("finished_at")),
        )

    async def frames(
        self, invocation_id: str, after: int, heartbeat: float, batch: int
    ) -> AsyncIterator[bytes]:
        """The invocations SSE stream of an invocation, read from its Redis stream.

        The same frames as a reader of the owner's log gets: ``id: <cursor>`` + ``data:``
        per event, ``: ping`` after ``heartbeat`` seconds of silence, ``event: gap`` for
        entries trimmed before the reader got them, and ``event: end``. A Redis failure is
        retried (with pings to the client meanwhile) from the same cursor.
        """
        stream = self.stream_key(invocation_id)
        cursor = after
        wait = RETRY_FIRST
        block = max(1, int(heartbeat * 1000))
        while True:
            try:
                answer = await self.redis.xread({stream: f"0-{cursor}"}, count=batch, block=block)
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
                    known = await self.find(invocation_id)
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

    async def of_session(self, key: tuple[str, str, str]) -> list[RemoteInvocation]:
        """The session's invocations Redis still knows (any server's), in no order."""
        ids = await self.redis.smembers(self.session_key(key))
        found = [await self.find(invocation_id) for invocation_id in sorted(ids)]
        return [remote for remote in found if remote is not None and remote.key == key]

    # -- cancelling -----------------------------------------------------------------------
    async def cancel(self, invocation_id: str) -> None:
        """Asks the owner of the invocation, wherever it runs, to cancel it.

        The request is stored as well as published: an owner cut off from Redis when it
        was published applies it once it is back (see ``Liveness``).

        Raises:
            redis.RedisError: Redis is unreachable.
        """
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.cancelled_key(invocation_id), "1", ex=int(self.expire_after))
            pipe.publish(self.cancel_channel, invocation_id)
            await pipe.execute()

    async def stored_cancels(self, invocation_ids: list[str]) -> list[str]:
        """Those of ``invocation_ids`` that someone asked to cancel."""
        if not invocation_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for invocation_id in invocation_ids:
                pipe.exists(self.cancelled_key(invocation_id))
            answers = await pipe.execute()
        return [i for i, found in zip(invocation_ids, answers, strict=True) if found]
