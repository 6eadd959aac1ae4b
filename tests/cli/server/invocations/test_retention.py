"""Finished invocations stay readable for the retention time: logs kept per user and by
memory, so one user's burst does not evict another's, and a log evicted early is read back
from the stored events with the same cursors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from adk_rx import Event
from adk_rx.cli.server import Limits
from tests.cli.server.conftest import BASE
from tests.cli.server_support import Frame, parse_frames, user_text

pytestmark = pytest.mark.asyncio

STREAMED = "slow 5 0.001"  # five partial chunks then the final event: cursors 1..6


def invocations(app: str, user: str, sid: str = "s1") -> str:
    return f"/apps/{app}/users/{user}/sessions/{sid}/invocations"


async def run_to_end(http: httpx.AsyncClient, app: str, user: str, text: str) -> str:
    started = await http.post(
        invocations(app, user), json={"new_message": user_text(text), "streaming": True}
    )
    assert started.status_code == 202, started.text
    invocation_id = started.json()["invocation_id"]
    await http.get(f"{invocations(app, user)}/{invocation_id}/events")  # until it ends
    return invocation_id


async def frames_of(
    http: httpx.AsyncClient, app: str, user: str, invocation_id: str, after: int = 0
) -> list[Frame]:
    answer = await http.get(
        f"{invocations(app, user)}/{invocation_id}/events", params={"after": after}
    )
    assert answer.status_code == 200, answer.text
    return parse_frames(answer.text)


def ids(frames: list[Frame]) -> list[int]:
    return [f.id for f in frames if f.event is None and f.id is not None]


async def sessions_for(http: httpx.AsyncClient, app: str, *users: str) -> None:
    for user in users:
        created = await http.post(f"/apps/{app}/users/{user}/sessions", json={"session_id": "s1"})
        assert created.status_code == 200


async def test_one_users_burst_does_not_evict_another_users_log(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(kept_per_user=2))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        await sessions_for(http, app_name, "alice", "bob")
        alices = await run_to_end(http, app_name, "alice", STREAMED)
        bobs = [await run_to_end(http, app_name, "bob", STREAMED) for _ in range(6)]
        # Alice's log is still whole: its partial chunks too (the store never had those).
        assert ids(await frames_of(http, app_name, "alice", alices)) == [1, 2, 3, 4, 5, 6]
        assert ids(await frames_of(http, app_name, "bob", bobs[-1])) == [1, 2, 3, 4, 5, 6]
        # Bob's oldest were evicted by his own burst: read back from the store, same cursors.
        assert ids(await frames_of(http, app_name, "bob", bobs[0])) == [6]


async def test_an_evicted_log_is_served_from_the_store_with_the_same_ids_and_end(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(kept_per_user=1))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        await sessions_for(http, app_name, "u1")
        first = await run_to_end(http, app_name, "u1", "weather Oslo")
        live = await frames_of(http, app_name, "u1", first)
        await run_to_end(http, app_name, "u1", "hello")  # evicts the first log
        replayed = await frames_of(http, app_name, "u1", first)
        stored_live = [f for f in live if f.event is None and not Event.from_json(f.data).partial]
        assert [(f.id, f.data) for f in replayed if f.event is None] == [
            (f.id, f.data) for f in stored_live
        ]
        assert replayed[-1].event == "end" and json.loads(replayed[-1].data)["status"] == (
            "completed"
        )
        last_id = ids(live)[-1]
        resumed = await frames_of(http, app_name, "u1", first, after=last_id - 1)
        assert ids(resumed) == [last_id] and resumed[-1].event == "end"
        status = (await http.get(f"{invocations(app_name, 'u1')}/{first}")).json()
        assert status["status"] == "completed" and status["last_event_id"] == last_id
        cancelled = await http.post(f"{invocations(app_name, 'u1')}/{first}:cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "completed"


async def test_past_the_memory_bound_the_user_holding_the_most_loses_first(
    make_app: Callable[..., Any], app_name: str
):
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=make_app()), base_url=BASE
    ) as probe:
        await sessions_for(probe, app_name, "p")
        one = await run_to_end(probe, app_name, "p", "slow 40 0.001")
        size = probe._transport.app.state.server.registry.kept_bytes  # type: ignore[attr-defined]
        assert size > 0 and one
    app = make_app(limits=Limits(kept_bytes=int(size * 2.5)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        await sessions_for(http, app_name, "small", "big")
        smalls = await run_to_end(http, app_name, "small", "slow 10 0.001")
        bigs = [await run_to_end(http, app_name, "big", "slow 40 0.001") for _ in range(3)]
        assert app.state.server.registry.kept_bytes <= size * 2.5
        assert len(ids(await frames_of(http, app_name, "small", smalls))) == 11  # kept whole
        assert ids(await frames_of(http, app_name, "big", bigs[0])) == [41]  # from the store
        assert len(ids(await frames_of(http, app_name, "big", bigs[-1]))) == 41


async def test_an_invocation_is_not_readable_after_its_session_was_deleted(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(kept_per_user=1))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        await sessions_for(http, app_name, "u1")
        evicted = await run_to_end(http, app_name, "u1", "one")
        kept = await run_to_end(http, app_name, "u1", "two")
        base = invocations(app_name, "u1")
        assert (await http.get(f"{base}/{evicted}")).status_code == 200
        deleted = await http.delete(f"/apps/{app_name}/users/u1/sessions/s1")
        assert deleted.status_code in (200, 204)
        await sessions_for(http, app_name, "u1")  # a new session with the same id
        for invocation_id in (evicted, kept):
            assert (await http.get(f"{base}/{invocation_id}")).status_code == 404
            assert (await http.get(f"{base}/{invocation_id}/events")).status_code == 404
        assert (await http.get(base)).json() == []
