"""A survivor resumes the run of a resumable app whose server died.

When the liveness sweep (:mod:`adk_rx.cli.server.cluster.broker_liveness`) finds a dead
server's run and holds its session's turn lock, and the run's app is resumable
(``App(resumability_config=ResumabilityConfig(is_resumable=True))``), this server continues
the invocation instead of recording it ``INTERRUPTED``:

1. the run's Redis stream is completed with the stored events it missed (the owner publishes a
   resumable app's events as they come, so usually none), and its entries start this
   server's log of the invocation: the cursors go on where the dead server's stopped, so a
   reader that follows the run from any server neither misses nor repeats an event;
2. the Runner resumes the invocation from its stored events (``run_async(invocation_id=...)``,
   :mod:`adk_rx.resumability`): agents that finished do not run again, a tool call whose
   response is stored is not executed again, a model response that was stored is not asked
   for again; a call the crash left without a response runs again when its tool is
   idempotent and is answered ``{"error": "interrupted"}`` otherwise;
3. the run is announced as this server's (taken off the dead server's list in the same
   write) and published to the same stream, up to its ``end`` entry; a cancel that was
   asked for while its server was dying (stored in Redis) cancels the resumed run at once
   (it ends ``cancelled``; a call left open is answered by the session's next turn);
4. the turn lock taken by the sweep is given back once the resumed run holds the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from adk_rx.errors import SessionBusyError, TooManyRunsError
from adk_rx.events import Event
from adk_rx.run_config import RunConfig
from adk_rx.runner import Runner
from adk_rx.sessions.base import BaseSessionService

from ..invocations.log import Entry, InvocationLog
from ..invocations.registry import InvocationRegistry
from ..limits import Limits
from .broker import Broker

__all__ = ["Takeover", "complete_stream"]

_log = logging.getLogger("adk_rx.server.broker")


async def complete_stream(
    broker: Broker, invocation_id: str, stored: Sequence[Event]
) -> list[Entry] | None:
    """Appends to the invocation's Redis stream the ``stored`` events it does not hold (the
    dead owner had not published them); returns every entry of the stream, or None when the
    stream had ended already."""
    stream = broker.stream_key(invocation_id)
    have = await broker.redis.xrange(stream)
    if any("end" in fields for _, fields in have):
        return None
    entries = [
        Entry(int(entry_id.partition("-")[2]), Event.from_json(fields["e"]), fields["e"])
        for entry_id, fields in have
    ]
    seen = {fields.get("i") for _, fields in have}
    cursor = entries[-1].seq if entries else 0
    missing = [event for event in stored if event.id not in seen]
    async with broker.redis.pipeline(transaction=True) as pipe:
        for event in missing:
            cursor += 1
            entry = Entry(cursor, event, event.to_json())
            entries.append(entry)
            pipe.xadd(stream, {"i": event.id, "e": entry.json}, id=f"0-{cursor}")
        pipe.hset(broker.meta_key(invocation_id), "head", str(cursor))
        await pipe.execute()
    return entries


class Takeover:
    """Resumes, on this server, the runs of resumable apps whose server died.

    Args:
        broker: this server's broker.
        registry: this server's runs (the resumed one becomes one of them).
        runners: gives an app's Runner by name (``AppRunners.get``).
        sessions: the session store (the undecorated one).
        limits: the server's limits (the resumed run's deadline).
    """

    def __init__(
        self,
        broker: Broker,
        registry: InvocationRegistry,
        runners: Any,
        sessions: BaseSessionService,
        limits: Limits,
    ) -> None:
        self.broker = broker
        self.registry = registry
        self.runners = runners
        self.sessions = sessions
        self.limits = limits

    async def runner_if_resumable(self, app_name: str) -> Runner | None:
        """The app's Runner when the app is resumable; None otherwise (or if it fails to
        load: its run is then recorded interrupted)."""
        try:
            runner = await self.runners.get(app_name)
        except Exception as exc:
            _log.warning("app %r could not be loaded to resume a run: %s", app_name, exc)
            return None
        return runner if runner.services.is_resumable else None

    async def resume(
        self, owner: str, invocation_id: str, key: tuple[str, str, str], runner: Runner, held: Any
    ) -> bool:
        """Resumes the invocation here; False when it cannot start now (the sweep tries
        again). ``held`` (the session's turn lock, or None) is this method's to give back."""
        release = True
        try:
            session = await asyncio.to_thread(
                lambda: self.sessions.get_session(
                    app_name=key[0], user_id=key[1], session_id=key[2]
                ).run()
            )
            ours = [] if session is None else session.events
            stored = [e for e in ours if e.invocation_id == invocation_id and e.author != "user"]
            earlier = await complete_stream(self.broker, invocation_id, stored)
            if earlier is None or session is None:
                return True  # it had ended, or its session is gone: nothing to resume
            cancelled = await self.broker.stored_cancels([invocation_id])
            try:
                log = self.registry.start(
                    runner,
                    user_id=key[1],
                    session_id=key[2],
                    new_message=None,
                    run_config=RunConfig(timeout=self.limits.run_timeout),
                    state_delta=None,
                    invocation_id=invocation_id,
                    earlier=earlier,
                )
            except (SessionBusyError, TooManyRunsError) as exc:
                _log.warning("invocation %s is resumed later: %s", invocation_id, exc)
                return False
            if cancelled:  # asked while its server was dying
                self.registry.cancel(log)
            known = await self.broker.find(invocation_id)
            if known is not None and known.created_at is not None:
                log.created_at = known.created_at
            head = earlier[-1].seq if earlier else 0
            await self.broker.publish(log, after=head, taken_from=owner)
            release = False
            self.broker.spawn(_release_when_running(log, head, held))
            _log.warning(
                "invocation %s (session %s) of a stopped server resumed here", invocation_id, key[2]
            )
            return True
        finally:
            if release:
                await _dispose(held)


async def _release_when_running(log: InvocationLog, before: int, held: Any) -> None:
    """Gives the sweep's turn lock back once the resumed run holds the session (the Runner
    takes its own lock before it stores or streams anything) or has ended."""
    try:
        while not log.finished and log.head <= before:
            await log.wait(None)
    finally:
        await _dispose(held)


async def _dispose(held: Any) -> None:
    dispose = getattr(held, "dispose", None)
    if dispose is not None:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(dispose)
