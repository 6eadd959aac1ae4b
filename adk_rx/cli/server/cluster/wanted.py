"""Publishing only what is read: which of a server's runs a reader elsewhere asked for.

A reader on another server asks for a run's events by setting ``P:wanted:{id}`` and sending
the id on ``P:want`` (:meth:`Broker.want <adk_rx.cli.server.cluster.broker.Broker.want>`).
The owner's publisher of that run waits (:meth:`Wanted.await_reader`) until the message
arrives (the liveness listener calls :meth:`Wanted.mark`), the key is found, or the run ends
unread. A listener that was cut off from Redis looks up the keys of the runs still waiting
(:meth:`Wanted.waiting`) when it subscribes again.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..invocations.log import InvocationLog

__all__ = ["Wanted"]


class Wanted:
    """The runs of one server whose publishers wait for a reader elsewhere.

    Args:
        redis: the broker's client.
        key_of: the ``P:wanted:{id}`` key of an invocation id.
    """

    def __init__(self, redis: Any, key_of: Any) -> None:
        self._redis = redis
        self._key_of = key_of
        self._events: dict[str, asyncio.Event] = {}

    def add(self, invocation_id: str) -> asyncio.Event:
        """Registers a run whose publisher will wait (before Redis knows the run)."""
        event = self._events[invocation_id] = asyncio.Event()
        return event

    def discard(self, invocation_id: str) -> None:
        """The run's publisher waits no more."""
        self._events.pop(invocation_id, None)

    async def await_reader(self, log: InvocationLog, invocation_id: str) -> bool:
        """Waits until a reader on another server wants the events (True) or the run ends
        unread (False): events cross Redis only when someone elsewhere reads them."""
        wanted = self._events.get(invocation_id) or self.add(invocation_id)
        with contextlib.suppress(Exception):  # Redis down: the listener tells us later
            if await self._redis.exists(self._key_of(invocation_id)):
                return True
        asked = asyncio.ensure_future(wanted.wait())
        try:
            await asyncio.wait({asked, log.ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        return wanted.is_set()

    def mark(self, invocation_id: str) -> None:
        """A reader elsewhere wants the events of this server's run (from the listener)."""
        wanted = self._events.get(invocation_id)
        if wanted is not None:
            wanted.set()

    def waiting(self) -> list[str]:
        """This server's runs whose events nobody elsewhere has asked for yet."""
        return [i for i, wanted in self._events.items() if not wanted.is_set()]
