"""A cancel published while the owner is cut off from Redis is not lost: it is stored too,
and the owner applies it once it listens again."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from adk_rx import SqlSessionService
from adk_rx.cli.server import create_app
from adk_rx.cli.server.cluster.broker import Broker
from adk_rx.cli.server.cluster.broker_liveness import Liveness
from tests.cli.server.conftest import BASE
from tests.cli.server.redis_support import key_prefix, redis_url
from tests.cli.server_support import parse_frames, unique_app, user_text, write_agents

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


async def test_a_cancel_sent_while_the_owner_was_not_listening_is_applied_when_it_is(
    tmp_path: Path,
):
    app_name = unique_app("outage")
    root = write_agents(tmp_path / "agents", app_name)
    sessions = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    with key_prefix() as prefix:
        owner_broker = Broker(redis_url(), prefix=prefix)
        other = Broker(redis_url(), prefix=prefix)
        # Served without its lifespan: the owner's cancel listener is not running, as when
        # its connection to Redis is down.
        app = create_app(root, session_service=sessions, broker=owner_broker)
        transport = httpx.ASGITransport(app=app)
        base = f"/apps/{app_name}/users/u1/sessions/s1/invocations"
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            created = await http.post(
                f"/apps/{app_name}/users/u1/sessions", json={"session_id": "s1"}
            )
            assert created.is_success
            started = await http.post(base, json={"new_message": user_text("slow 1000 0.02")})
            iid = started.json()["invocation_id"]
            await other.cancel(iid)  # published to nobody; stored
            assert (await http.get(f"{base}/{iid}")).json()["status"] == "running"
            registry = app.state.server.registry
            liveness = Liveness(owner_broker, registry, sessions, None)
            assert await liveness.apply_stored_cancels() == 1  # what a re-subscribe does
            frames = parse_frames((await http.get(f"{base}/{iid}/events")).text)
            assert json.loads(frames[-1].data or "{}")["status"] == "cancelled"
            stored = sessions.get_session(app_name=app_name, user_id="u1", session_id="s1").run()
            assert stored is not None and stored.events[-1].error_code == "CANCELLED"
        await owner_broker.close()
        await other.close()
    sessions.close()
