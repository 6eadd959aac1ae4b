""" "Busy" across server processes: a run request takes the session's turn lock without waiting.

In one process the registry answers 409 when the session already has a run. With several
processes (a broker is configured) the run of another process is seen only by the store's
turn lock, which the Runner would wait for. So before starting, the server takes that lock
without waiting (``SqlSessionService.try_lock_session``): held elsewhere -> 409. Held here,
it is kept until the run has stored its user message: the Runner's own lock on the session
was then taken at once (the lock is re-entrant within a process) and is given back before
the run's log ends, so a client that saw the end may start the next turn on any server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.exceptions import HTTPException

from ..shared import Server

__all__ = ["hold_turn", "release_turn"]


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
