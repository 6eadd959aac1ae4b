""" "Busy" across server processes: a run request takes the session's turn lock without waiting.

In one process the registry answers 409 when the session already has a run. With several
processes (a broker is configured) the run of another process is seen only by the store's
turn lock, which the Runner would wait for. So before starting, the server takes that lock
without waiting (``SqlSessionService.try_lock_session``): held elsewhere -> 409. Held here,
it is kept until the run's log ends; the Runner's own lock on the session is then taken at
once (the lock is re-entrant within a process).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.exceptions import HTTPException

from ..invocations.log import InvocationLog
from ..shared import Server

__all__ = ["hold_turn", "release_turn", "release_when_done"]

_pending: set[asyncio.Task[None]] = set()


async def hold_turn(server: Server, app_name: str, user_id: str, session_id: str) -> Any:
    """The session's turn lock, held for the run to start; None when not needed.

    Raises:
        HTTPException: 409 when another process holds it.
    """
    if server.broker is None:
        return None
    service = getattr(server.sessions, "inner", server.sessions)
    try_lock = getattr(service, "try_lock_session", None)
    if try_lock is None:
        return None
    held = await asyncio.to_thread(
        try_lock, app_name=app_name, user_id=user_id, session_id=session_id
    )
    if held is None:
        raise HTTPException(409, f"session {session_id!r} already has a run in progress")
    return held


async def release_turn(held: Any) -> None:
    """Gives the lock back (off the loop: it is a database statement)."""
    if held is not None:
        await asyncio.to_thread(held.dispose)


def release_when_done(log: InvocationLog, held: Any) -> None:
    """Gives the lock back once the run's log has ended."""

    async def wait() -> None:
        try:
            while not log.finished:
                await log.wait(None)
        finally:
            await release_turn(held)

    task = asyncio.get_running_loop().create_task(wait())
    _pending.add(task)
    task.add_done_callback(_pending.discard)
