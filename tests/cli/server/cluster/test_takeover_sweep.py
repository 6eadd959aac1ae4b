"""The liveness sweep resuming a dead server's run in this process: Redis holds the dead
server's record and stream, the session (SQLite) its stored events."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
import redis as redis_client
from google.genai import types

from adk_rx import SqlSessionService
from adk_rx.cli.server import create_app
from adk_rx.cli.server.cluster.broker import Broker
from adk_rx.cli.server.cluster.broker_liveness import Liveness
from adk_rx.cli.server.cluster.takeover import Takeover
from adk_rx.events import Event
from tests.cli.server.conftest import BASE
from tests.cli.server.redis_support import key_prefix, redis_url
from tests.cli.server_support import parse_frames, unique_app

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

APP = """
from adk_rx import App, FunctionTool, LlmAgent, ResumabilityConfig
from adk_rx.testing import ScriptedLlm


def send(to: str) -> dict:
    \"\"\"Sends mail (not idempotent).\"\"\"
    raise AssertionError("a call the dead server may have made must not run again")


def respond(request):
    last = request.contents[-1].parts[-1]
    return f"answered {last.function_response.response}"


app = App(
    name=__name__.split(".")[0],
    root_agent=LlmAgent(name="a", model=ScriptedLlm([respond]), tools=[FunctionTool(send)]),
    resumability_config=ResumabilityConfig(is_resumable=True),
)
"""


async def _resume_a_dead_server_s_run(tmp_path: Path, *, cancelled: bool) -> dict:
    app_name = unique_app("sweep")
    (tmp_path / "agents" / app_name).mkdir(parents=True)
    (tmp_path / "agents" / app_name / "agent.py").write_text(APP)
    sessions = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    session = sessions.create_session(app_name=app_name, user_id="u1", session_id="s1").run()
    user = Event(
        author="user",
        invocation_id="inv-1",
        content=types.Content(role="user", parts=[types.Part(text="mail bob")]),
    )
    call = types.FunctionCall(id="c-1", name="send", args={"to": "bob"})
    asked = Event(
        author="a",
        invocation_id="inv-1",
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
    )
    for event in (user, asked):
        sessions.append_event(session, event).run()
    with key_prefix() as prefix:
        # The dead server's record: it ran inv-1 and had published the call as cursor 1.
        with redis_client.Redis.from_url(redis_url(), decode_responses=True) as client:
            client.hset(
                f"{prefix}:inv:inv-1",
                mapping={"app": app_name, "user": "u1", "session": "s1", "owner": "dead"},
            )
            client.hset(f"{prefix}:inv:inv-1", "created_at", repr(time.time() - 5))
            client.xadd(f"{prefix}:inv:inv-1:events", {"i": asked.id, "e": asked.to_json()}, "0-1")
            client.hset(f"{prefix}:running:dead", "inv-1", json.dumps([app_name, "u1", "s1"]))
            client.sadd(f"{prefix}:replicas", "dead")
        broker = Broker(redis_url(), prefix=prefix)
        app = create_app(tmp_path / "agents", session_service=sessions, broker=broker)
        server = app.state.server
        takeover = Takeover(broker, server.registry, server.runners, sessions, server.limits)
        liveness = Liveness(broker, server.registry, sessions, sessions.try_lock_session, takeover)
        if cancelled:
            await broker.cancel("inv-1")  # asked while the dead server could not hear it
        await liveness.sweep()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            url = f"/apps/{app_name}/users/u1/sessions/s1/invocations/inv-1/events"
            frames = parse_frames((await http.get(url)).text)
        await broker.close()
        with redis_client.Redis.from_url(redis_url(), decode_responses=True) as client:
            entries = client.xrange(f"{prefix}:inv:inv-1:events")
            record = client.hgetall(f"{prefix}:inv:inv-1")
            left = client.hgetall(f"{prefix}:running:dead")
    stored = sessions.get_session(app_name=app_name, user_id="u1", session_id="s1").run()
    sessions.close()
    assert stored is not None
    return {
        "frames": frames,
        "entries": entries,
        "record": record,
        "left": left,
        "stored": stored.events,
        "replica": broker.replica_id,
    }


async def test_the_sweep_resumes_the_run_on_the_same_stream_without_running_the_call_again(
    tmp_path: Path,
):
    got = await _resume_a_dead_server_s_run(tmp_path, cancelled=False)
    events = [(f.id, json.loads(f.data or "")) for f in got["frames"] if f.id is not None]
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert events[0][1]["id"] == got["stored"][1].id  # the dead server's cursor 1, kept
    end = json.loads(got["frames"][-1].data or "")
    assert end == {"invocation_id": "inv-1", "status": "completed", "error": None}
    texts = [e.text() for e in got["stored"] if e.text()]
    assert texts == ["mail bob", "answered {'error': 'interrupted'}"]
    # The Redis stream holds the same entries, then the end; the run is this server's now.
    published = [(int(i.partition("-")[2]), f["i"]) for i, f in got["entries"] if "e" in f]
    assert published == [(seq, data["id"]) for seq, data in events]
    assert json.loads(got["entries"][-1][1]["end"])["status"] == "completed"
    assert got["record"]["owner"] == got["replica"] and got["left"] == {}
    assert float(got["record"]["created_at"]) < time.time() - 4  # the run's own start


async def test_a_cancel_stored_while_the_owner_was_dying_cancels_the_resumed_run(
    tmp_path: Path,
):
    got = await _resume_a_dead_server_s_run(tmp_path, cancelled=True)
    end = json.loads(got["frames"][-1].data or "")
    assert end["status"] == "cancelled"
    # Cancelled before it ran: nothing ran or was stored (the next turn answers the open call).
    assert [e.author for e in got["stored"]] == ["user", "a"]
    assert [c.id for c in got["stored"][-1].get_function_calls()] == ["c-1"]
    assert json.loads(got["entries"][-1][1]["end"])["status"] == "cancelled"
