"""Invocation logs, cancels and liveness on Redis, for several server processes.

With ``--broker-url redis://...`` every server-owned invocation is known to Redis, so a
client routed to any server process can list, stream and cancel it. Redis is transient; the
session store (PostgreSQL) stays the truth: losing Redis loses no stored event.

Keys (``P`` is the key prefix, ``adk_rx`` by default)::

    P:inv:{id}            hash: app, user, session, owner, status, error, head, times
    P:inv:{id}:events     stream: one entry per log entry, id "0-<cursor>", then the end entry
    P:replica:{rid}       a server's heartbeat (a key with a TTL)
    P:replicas            set of server ids that may own runs
    P:running:{rid}       hash: invocation id -> session of the runs a server owns
    P:claim:{id}          who recovers the invocation of a server that died (SET NX)
    P:session:{key}       set of a session's invocation ids (the listing of every server)
    P:wanted:{id}         a reader elsewhere wants the events (and P:want, its channel)
    P:cancelled:{id}      a cancel request, kept for an owner that missed the message
    P:cancel              pub/sub channel of cancel requests (the invocation id)

Every run is announced (its record, so any server finds, lists and cancels it), but its
events cross Redis only once a reader on another server asks for them (``P:wanted:{id}``
and a message on ``P:want``): the owner then publishes the log from its first entry. A run
nobody reads elsewhere costs Redis its record and its end entry; a reader that comes after
its end is served the stored events from the session, with the same cursors (the record
keeps them). A resumable app's run is published as it goes, read or not: if its server dies,
the one that resumes it (:mod:`~adk_rx.cli.server.cluster.takeover`) goes on with the same
stream, so a reader anywhere keeps its cursors; the stored events alone would not give them
(a streamed run's partial events have cursors too). The owner publishes by reading its own
in-process log at its own pace (like any reader), one pipelined write per burst, so a slow or
failing Redis never slows the run: a failed write is logged and retried, and the run goes
on. Entry ids are the log's cursors, so the SSE ``id:`` / ``after=`` cursors are the same on
every server. Readers elsewhere read the stream with ``XREAD BLOCK``
(:mod:`adk_rx.cli.server.cluster.remote`).

Liveness (heartbeats, and what another server does when one dies) is in
:mod:`adk_rx.cli.server.cluster.broker_liveness`; what publishing costs Redis is counted in
``Broker.counts`` and exported as metrics (:mod:`adk_rx.cli.server.cluster.broker_metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from typing import Any

from opentelemetry.metrics import MeterProvider

from adk_rx.errors import BrokerUnavailableError, ConfigurationError

from ..invocations.log import InvocationLog
from .broker_metrics import BrokerCounts
from .remote import RemoteInvocation
from .wanted import Wanted

__all__ = ["Broker", "RemoteInvocation"]

_log = logging.getLogger("adk_rx.server.broker")
RETRY_FIRST = 0.1
RETRY_LONGEST = 2.0
ANNOUNCE_WAIT = 1.0
FIND_ATTEMPTS = 5


class Broker:
    """One server's connection to Redis: publishes its runs, reads and cancels anyone's.

    Args:
        url: ``redis://HOST:PORT/DB`` (or ``rediss://``).
        prefix: the key prefix; servers that serve the same sessions share it.
        max_len: entries kept per invocation stream (approximately, ``MAXLEN ~``).
        expire_after: seconds a finished invocation's keys are kept.
        heartbeat: seconds between a server's heartbeats; it counts as dead after
            ``3 * heartbeat`` seconds without one.
        meter_provider: where the broker's costs are exported as metrics
            (:mod:`~adk_rx.cli.server.cluster.broker_metrics`); default: the global one.

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
        meter_provider: MeterProvider | None = None,
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
        self.wanted = Wanted(self.redis, self.wanted_key)  # this server's runs, until read
        self.counts = BrokerCounts(meter_provider)

    # -- keys -----------------------------------------------------------------------------
    def meta_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:inv:{invocation_id}"

    def stream_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:inv:{invocation_id}:events"

    def running_key(self, replica_id: str) -> str:
        return f"{self.prefix}:running:{replica_id}"

    def wanted_key(self, invocation_id: str) -> str:
        return f"{self.prefix}:wanted:{invocation_id}"

    @property
    def want_channel(self) -> str:
        return f"{self.prefix}:want"

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
    async def publish(self, log: InvocationLog, *, after: int = 0, taken_from: str = "") -> None:
        """Publishes a started invocation (its id is known) until its log ends.

        Returns once Redis knows the invocation (so another server finds it as soon as the
        client has its id), or after ``ANNOUNCE_WAIT`` seconds if Redis is slow or down: the
        announcement is then retried in the background and the run goes on. The events of a
        resumable app's run are published whether or not anyone reads them: a server that
        resumes it after this one died goes on with the same stream and cursors.
        ``after``/``taken_from``: a run resumed from dead server ``taken_from``, whose
        stream already holds the entries up to cursor ``after``.
        """
        announced = asyncio.get_running_loop().create_future()
        task = self.spawn(self._publish(log, announced, after, taken_from))
        self._publishers.add(task)
        task.add_done_callback(self._publishers.discard)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(announced), ANNOUNCE_WAIT)

    async def _publish(
        self, log: InvocationLog, announced: asyncio.Future[None], after: int, taken_from: str
    ) -> None:
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
                if taken_from:
                    pipe.hdel(self.running_key(taken_from), invocation_id)
                await pipe.execute()
            self.counts.writes += 1

        self.wanted.add(invocation_id)
        try:
            await self.retrying(begin, log, "announcing")
        finally:
            if not announced.done():
                announced.set_result(None)
        try:
            if not log.resumable and not await self.wanted.await_reader(log, invocation_id):
                end = {"invocation_id": invocation_id, "status": log.status, "error": log.error}
                self.counts.events_skipped += log.head
                await self.retrying(
                    lambda: self.finish(invocation_id, end, log.head, log.stored_seqs),
                    log,
                    "ending",
                )
                return
        finally:
            self.wanted.discard(invocation_id)
        cursor = after
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

    async def want(self, invocation_id: str) -> None:
        """Asks the owner to publish the run's events (stored, so an owner that missed the
        message finds it when it listens again)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.wanted_key(invocation_id), "1", ex=int(self.expire_after))
            pipe.publish(self.want_channel, invocation_id)
            await pipe.execute()

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
            self.counts.batch(len(entries), sum(len(e.json.encode()) for e in entries))

        await self.retrying(write, log, "publishing events")
        return last

    async def finish(
        self,
        invocation_id: str,
        end: dict[str, Any],
        cursor: int,
        stored: list[int] | None = None,
        owner: str | None = None,
    ) -> None:
        """Writes the end entry (id ``cursor + 1``), the final status and the expiry, and
        takes the run off its owner's list (this server's, or ``owner``'s). ``stored``: the
        cursors of the stored events of a run whose events were not published (a reader
        elsewhere is then served them from the session, with the same cursors)."""
        stream = self.stream_key(invocation_id)
        meta = self.meta_key(invocation_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xadd(stream, {"end": json.dumps(end)}, id=f"0-{cursor + 1}")
            if stored is not None:
                pipe.hset(meta, "stored", json.dumps(stored))
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
        self.counts.writes += 1

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
        return RemoteInvocation.of_record(invocation_id, meta, newest) if meta else None

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
