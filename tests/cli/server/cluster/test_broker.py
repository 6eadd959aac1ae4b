"""Several real ``adk-rx api-server`` processes on one PostgreSQL schema and one Redis."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from adk_rx import InMemorySessionService, SqlSessionService
from adk_rx.cli.main import build_parser
from adk_rx.cli.server.app import session_service_from_uri
from adk_rx.cli.server.cluster.broker import Broker
from adk_rx.errors import ConfigurationError
from tests.cli.server.redis_support import key_prefix, kill_connections, redis_url
from tests.cli.server_process import ServerProcess, api_server_process
from tests.cli.server_support import Frame, parse_frames, unique_app, user_text, write_agents
from tests.sessions.postgres import scratch_schema

pytestmark = pytest.mark.timeout(180)


@contextmanager
def cluster(tmp_path: Path, count: int) -> Iterator[tuple[list[ServerProcess], str, str, str]]:
    """``count`` servers sharing a fresh schema and a fresh Redis key prefix."""
    redis = redis_url()
    app = unique_app("cluster")
    agents = write_agents(tmp_path / "agents", app)
    with scratch_schema() as database, key_prefix() as prefix, ExitStack() as stack:
        options = ("--session-service-uri", database, "--broker-url", redis)
        servers = [
            stack.enter_context(
                api_server_process(agents, tmp_path, *options, env={"ADK_RX_BROKER_PREFIX": prefix})
            )
            for _ in range(count)
        ]
        yield servers, app, database, prefix


def sessions_url(server: ServerProcess, app: str) -> str:
    return f"{server.url}/apps/{app}/users/u1/sessions"


def start(http: httpx.Client, server: ServerProcess, app: str, sid: str, text: str) -> str:
    reply = http.post(
        f"{sessions_url(server, app)}/{sid}/invocations", json={"new_message": user_text(text)}
    )
    assert reply.status_code == 202, reply.text
    return reply.json()["invocation_id"]


def read_stream(
    server: ServerProcess,
    app: str,
    sid: str,
    iid: str,
    after: int = 0,
    stop_after: int | None = None,
) -> list[Frame]:
    """The frames of an invocation's stream up to the ``end`` frame (or ``stop_after``
    events)."""
    url = f"{sessions_url(server, app)}/{sid}/invocations/{iid}/events"
    text = ""
    with httpx.stream("GET", url, params={"after": after}, timeout=30) as response:
        assert response.status_code == 200, response.read()
        for chunk in response.iter_text():
            text += chunk
            frames = parse_frames(text)
            events = [f for f in frames if f.id is not None]
            if any(f.event == "end" for f in frames) or (stop_after and len(events) >= stop_after):
                return frames
    return parse_frames(text)


def end_of(frames: list[Frame]) -> dict:
    ends = [f for f in frames if f.event == "end"]
    assert len(ends) == 1, frames[-3:]
    return json.loads(ends[0].data or "{}")


def stored_events(database: str, app: str, sid: str):
    store = SqlSessionService(database)
    try:
        return store.get_session(app_name=app, user_id="u1", session_id=sid).run().events
    finally:
        store.close()


def test_a_run_started_on_one_server_streams_from_another_once_and_in_order(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (servers, app, _, _), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s1"}).status_code == 200
        iid = start(http, a, app, "s1", "slow 30 0.02")
        first = read_stream(b, app, "s1", iid, stop_after=5)
        head = [f.id for f in first if f.id is not None][:5]
        rest = read_stream(b, app, "s1", iid, after=head[-1])
        ids = head + [f.id for f in rest if f.id is not None]
        assert ids == list(range(1, len(ids) + 1))
        assert end_of(rest) == {"invocation_id": iid, "status": "completed", "error": None}
        on_a = read_stream(a, app, "s1", iid)
        assert [f.id for f in on_a if f.id is not None] == ids
        from_b = [json.loads(f.data or "")["id"] for f in first[:5] + rest if f.id is not None]
        assert from_b == [json.loads(f.data or "")["id"] for f in on_a if f.id is not None]
        status = http.get(f"{sessions_url(b, app)}/s1/invocations/{iid}").json()
        assert status["status"] == "completed" and status["last_event_id"] == ids[-1]


def test_sessions_busy_cancel_and_listing_hold_across_servers(tmp_path: Path) -> None:
    with cluster(tmp_path, 3) as (servers, app, database, _), httpx.Client(timeout=30) as http:
        a, b, c = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s2"}).status_code == 200
        listed = http.get(sessions_url(b, app)).json()
        assert [s["id"] for s in listed] == ["s2"]

        iid = start(http, a, app, "s2", "slow 1000 0.02")
        read_stream(b, app, "s2", iid, stop_after=2)  # running
        busy = http.post(
            f"{sessions_url(b, app)}/s2/invocations", json={"new_message": user_text("hi")}
        )
        assert busy.status_code == 409, busy.text

        cancelled = http.post(f"{sessions_url(c, app)}/s2/invocations/{iid}:cancel")
        assert cancelled.status_code == 202, cancelled.text
        end = end_of(read_stream(b, app, "s2", iid))
        assert end["status"] == "cancelled"
        assert stored_events(database, app, "s2")[-1].error_code == "CANCELLED"

        again = start(http, b, app, "s2", "hello")  # the session is free on every server
        assert end_of(read_stream(c, app, "s2", again))["status"] == "completed"


def test_a_killed_server_s_run_is_recorded_interrupted_and_its_stream_ended(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (servers, app, database, _), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s3"}).status_code == 200
        iid = start(http, a, app, "s3", "slow 2000 0.02")
        seen = read_stream(b, app, "s3", iid, stop_after=3)
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(10)
        killed_at = time.monotonic()
        after = max(f.id for f in seen if f.id is not None)
        rest = read_stream(b, app, "s3", iid, after=after)
        assert time.monotonic() - killed_at < 20
        end = end_of(rest)
        assert end["status"] == "failed" and end["error"].startswith("INTERRUPTED")
        ids = [f.id for f in seen + rest if f.id is not None]
        assert ids == sorted(set(ids))
        last = stored_events(database, app, "s3")[-1]
        assert (last.invocation_id, last.error_code) == (iid, "INTERRUPTED")
        data = [json.loads(f.data or "") for f in rest if f.id is not None]
        assert data[-1]["errorCode"] == "INTERRUPTED"

        later = start(http, b, app, "s3", "hello")  # the session takes new runs
        assert end_of(read_stream(b, app, "s3", later))["status"] == "completed"


def test_dropped_redis_connections_neither_fail_the_run_nor_lose_readers(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (servers, app, database, prefix), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s4"}).status_code == 200
        iid = start(http, a, app, "s4", "slow 150 0.02")
        seen = read_stream(b, app, "s4", iid, stop_after=3)
        assert kill_connections(prefix) > 0
        after = max(f.id for f in seen if f.id is not None)
        rest = read_stream(b, app, "s4", iid, after=after)
        assert end_of(rest)["status"] == "completed"
        ids = [f.id for f in seen + rest if f.id is not None]
        assert ids == list(range(1, len(ids) + 1))
        last = stored_events(database, app, "s4")[-1]
        assert last.text() == "".join(f"tok{i} " for i in range(150))
        assert a.is_alive() and b.is_alive()


def test_the_flags_are_in_help_and_bad_urls_are_refused_clearly(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["api-server", "--help"])
    text = capsys.readouterr().out
    assert "--session-service-uri" in text and "--broker-url" in text
    with pytest.raises(ConfigurationError, match="memory://"):
        session_service_from_uri("ftp://example/sessions")
    with pytest.raises(ConfigurationError, match="redis://"):
        Broker("http://127.0.0.1:6379")
    assert isinstance(session_service_from_uri("memory://"), InMemorySessionService)


def test_a_client_that_saw_the_end_starts_its_next_turn_on_any_server(tmp_path: Path) -> None:
    # The end frame comes after every lock of the run was given back, so the next turn,
    # started at once through the other server, never answers 409.
    with cluster(tmp_path, 2) as (servers, app, _, _), httpx.Client(timeout=30) as http:
        assert (
            http.post(sessions_url(servers[0], app), json={"session_id": "s9"}).status_code == 200
        )
        for turn in range(20):
            server = servers[turn % 2]
            iid = start(http, server, app, "s9", f"hello {turn}")
            assert end_of(read_stream(server, app, "s9", iid))["status"] == "completed"


def test_an_artifact_saved_through_one_server_is_served_by_another(tmp_path: Path) -> None:
    # No --artifact-service-uri: the artifacts go to the sessions' PostgreSQL database.
    with cluster(tmp_path, 2) as (servers, app, _, _), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s7"}).status_code == 200
        iid = start(http, a, app, "s7", "note shared words")
        assert end_of(read_stream(a, app, "s7", iid))["status"] == "completed"
        on_b = http.get(f"{sessions_url(b, app)}/s7/artifacts/note.txt/versions/latest")
        assert on_b.status_code == 200, on_b.text
        assert on_b.json() == {"text": "shared words"}
        assert http.get(f"{sessions_url(b, app)}/s7/artifacts").json() == ["note.txt"]


def test_every_server_lists_the_sessions_invocations_of_every_server(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (servers, app, _, _), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s8"}).status_code == 200
        first = start(http, a, app, "s8", "hello one")
        assert end_of(read_stream(a, app, "s8", first))["status"] == "completed"
        second = start(http, b, app, "s8", "hello two")
        assert end_of(read_stream(b, app, "s8", second))["status"] == "completed"
        for server in servers:
            listed = http.get(f"{sessions_url(server, app)}/s8/invocations").json()
            assert [i["invocation_id"] for i in listed] == [first, second]
            assert {i["status"] for i in listed} == {"completed"}
        other = http.get(f"{server.url}/apps/{app}/users/u2/sessions/s8/invocations").json()
        assert other == []


def test_a_run_nobody_reads_elsewhere_crosses_redis_only_as_its_end(tmp_path: Path) -> None:
    import redis as redis_client

    from tests.cli.server.redis_support import redis_url

    with cluster(tmp_path, 2) as (servers, app, _, prefix), httpx.Client(timeout=30) as http:
        a, b = servers
        assert http.post(sessions_url(a, app), json={"session_id": "s6"}).status_code == 200
        iid = start(http, a, app, "s6", "slow 5 0.001")
        on_a = read_stream(a, app, "s6", iid)
        assert end_of(on_a)["status"] == "completed"
        with redis_client.Redis.from_url(redis_url(), decode_responses=True) as client:
            entries = client.xrange(f"{prefix}:inv:{iid}:events")
        assert [list(fields) for _, fields in entries] == [["end"]]
        # Read elsewhere afterwards: the stored events, from the session, with A's cursors.
        on_b = read_stream(b, app, "s6", iid)
        stored_on_a = [(f.id, json.loads(f.data or "")["id"]) for f in on_a if f.id is not None]
        stored_on_a = [pair for pair in stored_on_a if pair[0] == stored_on_a[-1][0]]
        seen_on_b = [(f.id, json.loads(f.data or "")["id"]) for f in on_b if f.id is not None]
        assert seen_on_b[-1] == stored_on_a[-1]
        assert end_of(on_b)["status"] == "completed"
