"""Liveness of the server processes that share one Redis, and cancels that reach the owner.

Every server:

* heartbeats: sets ``P:replica:{rid}`` with a TTL of three heartbeats, and lists itself in
  ``P:replicas``;
* listens on ``P:cancel`` and cancels the runs it owns when asked; a cancel is also stored
  (``P:cancelled:{id}``), and a server that (re)subscribes applies the stored ones, so a
  cancel published while the owner was cut off from Redis is not lost;
* watches the others: a server whose heartbeat key is gone is dead. For each run on its
  ``P:running:{rid}`` list, one surviving server claims the run (``SET NX``) and closes it:

  1. takes the session's turn lock without waiting; while the store says the lock is held,
     the owner is still running the turn (it only lost Redis), so nothing is done;
  2. stores the answers to the calls the crash left open (:mod:`adk_rx.runner.dangling`)
     and a final event with ``error_code="INTERRUPTED"``;
  3. publishes the stored events the stream missed, the records, and the ``end`` entry.

  A dead server is noticed within ``3 * heartbeat`` seconds plus one watch period. The run of
  a resumable app is resumed on the surviving server instead of steps 2 and 3
  (:mod:`adk_rx.cli.server.cluster.takeover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable

from adk_rx.events import Event
from adk_rx.runner.dangling import dangling_calls, interrupted_answers
from adk_rx.sessions.base import BaseSessionService

from ..invocations.registry import InvocationRegistry
from .broker import Broker
from .takeover import Takeover, complete_stream

__all__ = ["INTERRUPTED_CODE", "Liveness"]

_log = logging.getLogger("adk_rx.server.broker")
INTERRUPTED_CODE = "INTERRUPTED"
INTERRUPTED_MESSAGE = "the server process running the invocation stopped"


class Liveness:
    """The heartbeat, cancel listener and watcher of one server.

    Args:
        broker: the server's broker.
        registry: the server's runs (cancels are applied to them).
        sessions: the session store (the undecorated one), where records are written.
        try_lock: takes a session's turn lock without waiting (blocking call; None when
            held elsewhere), or None when the store has no such lock.
        takeover: resumes the runs of resumable apps (None: every run of a dead server is
            recorded interrupted).
    """

    def __init__(
        self,
        broker: Broker,
        registry: InvocationRegistry,
        sessions: BaseSessionService,
        try_lock: Callable[..., object] | None,
        takeover: Takeover | None = None,
    ) -> None:
        self.broker = broker
        self.registry = registry
        self.sessions = sessions
        self.try_lock = try_lock
        self.takeover = takeover

    def start(self) -> None:
        """Starts the background tasks (on the running loop)."""
        self.broker.spawn(self._heartbeat())
        self.broker.spawn(self._cancels())
        self.broker.spawn(self._watch())

    async def stop(self) -> None:
        """Says goodbye: this server's heartbeat and list entry go (its runs have ended)."""
        broker = self.broker
        try:
            async with broker.redis.pipeline(transaction=True) as pipe:
                pipe.delete(f"{broker.prefix}:replica:{broker.replica_id}")
                pipe.srem(f"{broker.prefix}:replicas", broker.replica_id)
                await pipe.execute()
        except Exception as exc:
            _log.warning("broker: leaving failed: %s", exc)

    # -- heartbeat ------------------------------------------------------------------------
    async def _heartbeat(self) -> None:
        broker = self.broker
        ttl = max(1, round(broker.heartbeat * 3))

        async def beat() -> None:
            async with broker.redis.pipeline(transaction=True) as pipe:
                pipe.set(f"{broker.prefix}:replica:{broker.replica_id}", "1", ex=ttl)
                pipe.sadd(f"{broker.prefix}:replicas", broker.replica_id)
                await pipe.execute()

        while True:
            await broker.retrying(beat, None, "the heartbeat")
            await asyncio.sleep(broker.heartbeat)

    # -- cancels --------------------------------------------------------------------------
    async def _cancels(self) -> None:
        broker = self.broker
        while True:
            pubsub = broker.redis.pubsub()
            try:
                await pubsub.subscribe(broker.cancel_channel, broker.want_channel)
                await self.apply_stored_cancels()  # those published while we were away
                await self.apply_stored_wants()
                async for message in pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    if message.get("channel") == broker.want_channel:
                        broker.wanted.mark(str(message["data"]))
                        continue
                    log = self.registry.get(str(message["data"]))
                    if log is not None:
                        self.registry.cancel(log)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("broker: the cancel listener lost Redis: %s", exc)
            finally:
                with contextlib.suppress(Exception):  # the connection may be gone already
                    await pubsub.aclose()
            await asyncio.sleep(0.2)

    async def apply_stored_cancels(self) -> int:
        """Cancels the runs of this server that a stored cancel names (published while it
        was cut off from Redis); returns how many."""
        running = {log.invocation_id: log for log in self.registry.running() if log.invocation_id}
        asked = await self.broker.stored_cancels(sorted(running))
        for invocation_id in asked:
            self.registry.cancel(running[invocation_id])
        return len(asked)

    async def apply_stored_wants(self) -> None:
        """Publishes the runs a reader elsewhere asked for while this server was not listening."""
        waiting = self.broker.wanted.waiting()
        if not waiting:
            return
        async with self.broker.redis.pipeline(transaction=False) as pipe:
            for invocation_id in waiting:
                pipe.exists(self.broker.wanted_key(invocation_id))
            found = await pipe.execute()
        for invocation_id, wanted in zip(waiting, found, strict=True):
            if wanted:
                self.broker.wanted.mark(invocation_id)

    # -- watching the others --------------------------------------------------------------
    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.broker.heartbeat)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("broker: checking the other servers failed: %s", exc)

    async def sweep(self) -> None:
        """Closes the runs of every server whose heartbeat has expired."""
        broker = self.broker
        redis = broker.redis
        for replica in await redis.smembers(f"{broker.prefix}:replicas"):
            if replica == broker.replica_id:
                continue
            if await redis.exists(f"{broker.prefix}:replica:{replica}"):
                continue
            runs = await redis.hgetall(broker.running_key(replica))
            for invocation_id, session in runs.items():
                claim = f"{broker.prefix}:claim:{invocation_id}"
                if not await redis.set(claim, broker.replica_id, nx=True, ex=60):
                    continue
                key = tuple(json.loads(session))
                if not await self._recover(replica, invocation_id, (key[0], key[1], key[2])):
                    await redis.delete(claim)  # the owner still holds the session: later
            if not await redis.hlen(broker.running_key(replica)):
                await redis.srem(f"{broker.prefix}:replicas", replica)

    async def _recover(self, owner: str, invocation_id: str, key: tuple[str, str, str]) -> bool:
        """Resumes a dead server's run (resumable app), or stores its INTERRUPTED record and
        ends its stream; False when the session is still held (by its owner) or busy here."""
        held = None
        if self.try_lock is not None:
            held = await asyncio.to_thread(
                self.try_lock, app_name=key[0], user_id=key[1], session_id=key[2]
            )
            if held is None:
                return False
        runner, stored = None, []
        try:
            if self.takeover is not None:
                runner = await self.takeover.runner_if_resumable(key[0])
            if runner is None:
                stored = await asyncio.to_thread(self._store_records, invocation_id, key)
        finally:
            dispose = getattr(held, "dispose", None)
            if runner is None and dispose is not None:
                await asyncio.to_thread(dispose)
        if runner is not None and self.takeover is not None:
            return await self.takeover.resume(owner, invocation_id, key, runner, held)
        await self._publish_missing(owner, invocation_id, stored)
        _log.warning(
            "invocation %s (session %s) of a stopped server recorded as %s",
            invocation_id,
            key[2],
            INTERRUPTED_CODE,
        )
        return True

    def _store_records(self, invocation_id: str, key: tuple[str, str, str]) -> list[Event]:
        """Appends the records; returns the invocation's stored events (user's excluded)."""
        sessions = self.sessions
        session = sessions.get_session(app_name=key[0], user_id=key[1], session_id=key[2]).run()
        if session is None:
            return []
        ours = [e for e in session.events if e.invocation_id == invocation_id]
        agents = [e for e in ours if e.author != "user"]
        records = interrupted_answers(
            d for d in dangling_calls(session) if d.event.invocation_id == invocation_id
        )
        finished = bool(agents) and (
            agents[-1].error_code is not None or (agents[-1].is_final_response() and not records)
        )
        if not finished:
            records.append(
                Event(
                    author=agents[-1].author if agents else key[0],
                    invocation_id=invocation_id,
                    error_code=INTERRUPTED_CODE,
                    error_message=INTERRUPTED_MESSAGE,
                    turn_complete=True,
                )
            )
        for record in records:
            agents.append(sessions.append_event(session, record).run())
        return agents

    async def _publish_missing(self, owner: str, invocation_id: str, stored: list[Event]) -> None:
        entries = await complete_stream(self.broker, invocation_id, stored)
        if entries is None:
            return
        cursor = entries[-1].seq if entries else 0
        end = {
            "invocation_id": invocation_id,
            "status": "failed",
            "error": f"{INTERRUPTED_CODE}: {INTERRUPTED_MESSAGE}",
        }
        await self.broker.finish(invocation_id, end, cursor, owner=owner)
