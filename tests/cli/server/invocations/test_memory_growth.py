"""A server's memory stops growing with the turns it has served: finished logs kept for
reattaching hold their events' JSON only, never the Event objects (several times larger),
so the kept logs cost what ``Limits.kept_bytes`` counts."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_rx import Event, SqlSessionService
from adk_rx.cli.server.invocations.log import InvocationLog
from tests.cli.server.conftest import BASE
from tests.cli.server.invocations.test_retention import (
    STREAMED,
    frames_of,
    run_to_end,
    sessions_for,
)
from tests.cli.server_support import user_text

pytestmark = pytest.mark.asyncio


def live_events() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Event))


async def test_events_alive_stop_growing_with_turns_served(
    make_app: Callable[..., Any], app_name: str, tmp_path: Path
):
    # A user per turn: the per-user bound never evicts, every log is kept.
    store = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}", event_cache_size=0)
    app = make_app(session_service=store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:

        async def turns(first: int, count: int) -> list[str]:
            done = []
            for n in range(first, first + count):
                await sessions_for(http, app_name, f"u{n}")
                done.append(await run_to_end(http, app_name, f"u{n}", STREAMED))
            return done

        await turns(0, 20)
        before = live_events()
        kept = await turns(20, 60)
        after = live_events()
        assert after - before < 30, f"{after - before} Event objects more after 60 turns"
        # The kept logs still serve every frame, partial chunks included.
        frames = await frames_of(http, app_name, "u79", kept[-1])
        assert [f.id for f in frames if f.id is not None] == [1, 2, 3, 4, 5, 6]
        assert frames[-1].event == "end"
    store.close()


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


async def test_defaults_stop_growing_by_a_thousand_turns(
    make_app: Callable[..., Any], app_name: str, tmp_path: Path
):
    """With every bound at its default (SQLite's history cache, the kept logs), what a server
    holds for finished turns reaches its bound within 1,000 short-session turns: the next
    turns add no Event objects and no invocation logs (the server_compare RSS row)."""
    store = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    app = make_app(session_service=store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:

        async def turns(first: int, count: int) -> None:
            for n in range(first, first + count):
                user, sid = f"u{n // 10}", "s1"  # a fresh session (and user) every 10 turns
                if n % 10 == 0:
                    created = await http.post(
                        f"/apps/{app_name}/users/{user}/sessions", json={"session_id": sid}
                    )
                    assert created.status_code == 200
                body = {"app_name": app_name, "user_id": user, "session_id": sid}
                ran = await http.post("/run", json={**body, "new_message": user_text("hi")})
                assert ran.status_code == 200, ran.text

        await turns(0, 1000)
        events, logs = live(Event), live(InvocationLog)
        await turns(1000, 200)
        assert live(Event) - events < 20, "Event objects grow past 1,000 turns"
        assert live(InvocationLog) - logs < 10, "invocation logs grow past 1,000 turns"
    store.close()
