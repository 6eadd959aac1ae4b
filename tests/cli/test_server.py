"""The HTTP server: ADK routes, server-owned invocations, reattach, cancel, 409/404/401/403.

Most tests drive the app in process through httpx's ASGI transport; the ones that need a
live stream (reattach while the run goes on, cancel mid-stream, heartbeats, shutdown) run
a real uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from adk_rx import Event, InMemorySessionService, SqlSessionService
from adk_rx.cli.server import Limits, create_app
from tests.cli.server_support import (
    Frame,
    live_server,
    parse_frames,
    unique_app,
    user_text,
    write_agents,
)

pytestmark = pytest.mark.asyncio

BASE = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    import tempfile

    app = unique_app("chat")
    root = write_agents(Path(tempfile.mkdtemp(prefix="adk_rx_server_")), app)
    return root, app


@pytest.fixture
def app_name(agents: tuple[Path, str]) -> str:
    return agents[1]


@pytest.fixture
def make_app(agents: tuple[Path, str]) -> Callable[..., Any]:
    def make(**options: Any) -> Any:
        options.setdefault("session_service", InMemorySessionService())
        return create_app(agents[0], **options)

    return make


@pytest_asyncio.fixture
async def client(make_app: Callable[..., Any]) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=make_app())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        yield http


async def new_session(
    http: httpx.AsyncClient, app: str, user: str = "u1", sid: str = "s1", **body: Any
) -> dict[str, Any]:
    response = await http.post(
        f"/apps/{app}/users/{user}/sessions", json={"session_id": sid, **body}
    )
    assert response.status_code == 200, response.text
    return response.json()


def run_body(app: str, text: str, user: str = "u1", sid: str = "s1", **extra: Any) -> dict:
    return {
        "app_name": app,
        "user_id": user,
        "session_id": sid,
        "new_message": user_text(text),
        **extra,
    }


def invocations(app: str, user: str = "u1", sid: str = "s1") -> str:
    return f"/apps/{app}/users/{user}/sessions/{sid}/invocations"


def events_of(frames: list[Frame]) -> list[Event]:
    return [Event.from_json(f.data) for f in frames if f.event is None and f.data]


# -- ADK routes ---------------------------------------------------------------------------
async def test_list_apps_names_the_sub_folders(client: httpx.AsyncClient, app_name: str):
    response = await client.get("/list-apps")
    assert response.status_code == 200
    assert response.json() == [app_name]


async def test_session_create_list_get_delete(client: httpx.AsyncClient, app_name: str):
    created = await new_session(client, app_name, state={"topic": "tea"})
    assert created["id"] == "s1"
    assert created["appName"] == app_name and created["userId"] == "u1"
    assert created["state"] == {"topic": "tea"}

    fresh = (await client.post(f"/apps/{app_name}/users/u1/sessions")).json()
    assert fresh["id"] and fresh["id"] != "s1"
    by_path = await client.post(f"/apps/{app_name}/users/u1/sessions/s3", json={})
    assert by_path.json()["id"] == "s3"

    duplicate = await client.post(f"/apps/{app_name}/users/u1/sessions", json={"sessionId": "s1"})
    assert duplicate.status_code == 409

    listed = (await client.get(f"/apps/{app_name}/users/u1/sessions")).json()
    assert {s["id"] for s in listed} == {"s1", "s3", fresh["id"]}

    got = await client.get(f"/apps/{app_name}/users/u1/sessions/s1")
    assert got.status_code == 200 and got.json()["state"] == {"topic": "tea"}

    deleted = await client.delete(f"/apps/{app_name}/users/u1/sessions/s1")
    assert deleted.status_code == 200 and deleted.json() is None
    assert (await client.get(f"/apps/{app_name}/users/u1/sessions/s1")).status_code == 404


async def test_unknown_app_and_session_answer_404(client: httpx.AsyncClient, app_name: str):
    assert (await client.get("/apps/nope/users/u1/sessions")).status_code == 404
    assert (await client.get(f"/apps/{app_name}/users/u1/sessions/none")).status_code == 404
    response = await client.post("/run", json=run_body(app_name, "hi", sid="none"))
    assert response.status_code == 404
    assert "detail" in response.json()
    # The run's own read of the session answers it: nothing is created or stored.
    streamed = await client.post("/run_sse", json=run_body(app_name, "hi", sid="none"))
    assert streamed.status_code == 404 and "not found" in streamed.json()["detail"]
    started = await client.post(
        f"/apps/{app_name}/users/u1/sessions/none/invocations",
        json={"new_message": {"role": "user", "parts": [{"text": "hi"}]}},
    )
    assert started.status_code == 404
    assert (await client.get(f"/apps/{app_name}/users/u1/sessions/none")).status_code == 404


async def test_run_answers_the_generated_events_without_the_user_message(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    response = await client.post("/run", json=run_body(app_name, "weather Rome"))
    assert response.status_code == 200, response.text
    events = [Event.from_dict(e) for e in response.json()]
    assert [e.author for e in events] == ["assistant"] * 3
    assert events[0].get_function_calls()[0].args == {"city": "Rome"}
    assert events[1].get_function_responses()[0].response == {
        "city": "Rome",
        "forecast": "sunny",
    }
    assert events[2].text() == "It is sunny in Rome."
    assert len({e.invocation_id for e in events}) == 1
    assert not any(e.partial for e in events)

    session = (await client.get(f"/apps/{app_name}/users/u1/sessions/s1")).json()
    assert [e["author"] for e in session["events"]] == ["user"] + ["assistant"] * 3
    assert session["state"]["last_reply"] == "It is sunny in Rome."


async def test_run_accepts_camel_case_keys_and_a_state_delta(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    body = {
        "appName": app_name,
        "userId": "u1",
        "sessionId": "s1",
        "newMessage": user_text("hello"),
        "stateDelta": {"mood": "happy"},
    }
    response = await client.post("/run", json=body)
    assert response.status_code == 200, response.text
    assert [Event.from_dict(e).text() for e in response.json()] == ["echo: hello"]
    session = (await client.get(f"/apps/{app_name}/users/u1/sessions/s1")).json()
    assert session["state"]["mood"] == "happy"


async def test_run_rejects_a_malformed_body_with_400(client: httpx.AsyncClient, app_name: str):
    await new_session(client, app_name)
    no_message = run_body(app_name, "x")
    del no_message["new_message"]
    assert (await client.post("/run", json=no_message)).status_code == 400
    no_parts = run_body(app_name, "x", new_message={"role": "user", "parts": []})
    assert (await client.post("/run", json=no_parts)).status_code == 400
    assert (await client.post("/run", content=b"{not json")).status_code == 400
    bad_delta = run_body(app_name, "x", state_delta=[1])
    assert (await client.post("/run", json=bad_delta)).status_code == 400


async def test_a_failing_run_answers_500_and_leaves_the_session_usable(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    failed = await client.post("/run", json=run_body(app_name, "fail"))
    assert failed.status_code == 500
    assert "failed on purpose" in failed.json()["detail"]
    again = await client.post("/run", json=run_body(app_name, "hello"))
    assert again.status_code == 200
    assert Event.from_dict(again.json()[-1]).text() == "echo: hello"


async def test_run_sse_sends_bare_data_frames_partials_then_the_final_event(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    response = await client.post("/run_sse", json=run_body(app_name, "hello", streaming=True))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = parse_frames(response.text)
    assert all(f.id is None and f.event is None and not f.comments for f in frames)
    events = events_of(frames)
    assert [(e.text(), bool(e.partial)) for e in events] == [
        ("echo: ", True),
        ("hello", True),
        ("echo: hello", False),
    ]


async def test_run_sse_reports_a_failure_as_an_error_data_frame(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    response = await client.post("/run_sse", json=run_body(app_name, "fail"))
    frames = parse_frames(response.text)
    assert "failed on purpose" in json.loads(frames[-1].data or "{}")["error"]


async def test_artifacts_list_versions_and_load(client: httpx.AsyncClient, app_name: str):
    await new_session(client, app_name)
    response = await client.post("/run", json=run_body(app_name, "note buy milk"))
    assert response.status_code == 200, response.text
    base = f"/apps/{app_name}/users/u1/sessions/s1/artifacts"
    assert (await client.get(base)).json() == ["note.txt"]
    assert (await client.get(f"{base}/note.txt/versions")).json() == [0]
    assert (await client.get(f"{base}/note.txt")).json() == {"text": "buy milk"}
    assert (await client.get(f"{base}/other.txt")).status_code == 404


async def test_sessions_default_to_sqlite_under_the_working_folder(
    agents: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root, app = agents
    monkeypatch.chdir(tmp_path)
    transport = httpx.ASGITransport(app=create_app(root))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app)
        assert (await http.post("/run", json=run_body(app, "hello"))).status_code == 200
    database = tmp_path / ".adk_rx" / "sessions.db"
    assert database.is_file()
    service = SqlSessionService(f"sqlite:///{database}")
    try:
        stored = service.get_session(app_name=app, user_id="u1", session_id="s1").run()
        assert [e.text() for e in stored.events] == ["hello", "echo: hello"]
    finally:
        service.close()


async def test_the_page_is_served_by_web_only(make_app: Callable[..., Any]):
    for web, status in ((True, 200), (False, 404)):
        transport = httpx.ASGITransport(app=make_app(web=web))
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            response = await http.get("/")
            assert response.status_code == status
            if web:
                assert response.headers["content-type"].startswith("text/html")
                assert "<script" in response.text and "http://" not in response.text


# -- invocations --------------------------------------------------------------------------
async def test_invocation_answers_202_with_the_id_every_event_carries(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    started = await client.post(
        invocations(app_name), json={"new_message": user_text("weather Oslo"), "streaming": True}
    )
    assert started.status_code == 202, started.text
    invocation_id = started.json()["invocation_id"]
    assert invocation_id.startswith("e-")
    assert started.headers["location"].endswith(f"/{invocation_id}/events")

    stream = await client.get(f"{invocations(app_name)}/{invocation_id}/events")
    frames = parse_frames(stream.text)
    assert frames[-1].event == "end"
    end = json.loads(frames[-1].data or "")
    assert end == {"invocation_id": invocation_id, "status": "completed", "error": None}
    data_frames = [f for f in frames if f.event is None]
    assert [f.id for f in data_frames] == list(range(1, len(data_frames) + 1))
    events = events_of(frames)
    assert {e.invocation_id for e in events} == {invocation_id}
    assert events[-1].text() == "It is sunny in Oslo."
    assert any(e.partial for e in events)

    session = (await client.get(f"/apps/{app_name}/users/u1/sessions/s1")).json()
    stored = [Event.from_dict(e) for e in session["events"]]
    assert {e.invocation_id for e in stored} == {invocation_id}
    # Every stored event of the run is in the stream, in the stored order.
    assert [e.id for e in events if not e.partial] == [e.id for e in stored[1:]]

    status = (await client.get(f"{invocations(app_name)}/{invocation_id}")).json()
    assert status["status"] == "completed" and status["last_event_id"] == len(data_frames)
    listed = (await client.get(invocations(app_name))).json()
    assert [i["invocation_id"] for i in listed] == [invocation_id]


async def test_reading_after_a_cursor_resumes_exactly_after_it(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name)
    started = await client.post(
        invocations(app_name), json={"new_message": user_text("slow 12 0.001"), "streaming": True}
    )
    url = f"{invocations(app_name)}/{started.json()['invocation_id']}/events"
    full = [f for f in parse_frames((await client.get(url)).text) if f.event is None]
    assert len(full) == 13
    for cursor in (0, 1, 7, 13):
        tail = [f for f in parse_frames((await client.get(f"{url}?after={cursor}")).text)]
        assert [f.id for f in tail if f.event is None] == list(range(cursor + 1, 14))
        assert tail[-1].event == "end"
    resumed = await client.get(url, headers={"Last-Event-ID": "10"})
    assert [f.id for f in parse_frames(resumed.text) if f.event is None] == [11, 12, 13]
    assert (await client.get(f"{url}?after=x")).status_code == 400


async def test_a_reader_behind_the_log_window_is_told_of_the_gap(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(log_capacity=4))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app_name)
        started = await http.post(
            invocations(app_name),
            json={"new_message": user_text("slow 9 0.001"), "streaming": True},
        )
        url = f"{invocations(app_name)}/{started.json()['invocation_id']}/events"
        live = parse_frames((await http.get(url)).text)  # a reader that keeps up misses nothing
        assert [f.event for f in live].count("gap") == 0
        frames = parse_frames((await http.get(url)).text)  # a late reader
    assert frames[0].event == "gap"
    assert json.loads(frames[0].data or "") == {"from": 1, "to": 6}
    assert [f.id for f in frames if f.event is None] == [7, 8, 9, 10]
    assert frames[-1].event == "end"


async def test_an_invocation_evicted_by_count_is_read_back_from_the_store(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(max_finished=1))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app_name)
        ids = []
        for text in ("one", "two"):
            started = await http.post(invocations(app_name), json={"new_message": user_text(text)})
            ids.append(started.json()["invocation_id"])
            await http.get(f"{invocations(app_name)}/{ids[-1]}/events")  # until it ends
        first = await http.get(f"{invocations(app_name)}/{ids[0]}")
        assert first.status_code == 200 and first.json()["status"] == "completed"
        frames = parse_frames((await http.get(f"{invocations(app_name)}/{ids[0]}/events")).text)
        assert events_of(frames)[-1].text() == "echo: one"
        assert frames[-1].event == "end"
        assert (await http.get(f"{invocations(app_name)}/{ids[1]}")).status_code == 200


async def test_finished_invocations_are_evicted_after_the_ttl(
    make_app: Callable[..., Any], app_name: str
):
    app = make_app(limits=Limits(finished_ttl=0.0))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        await new_session(http, app_name)
        started = await http.post(invocations(app_name), json={"new_message": user_text("hi")})
        invocation_id = started.json()["invocation_id"]
        await http.get(f"{invocations(app_name)}/{invocation_id}/events")
        # Any later look-up evicts what has outlived the TTL (0 s).
        assert (await http.get(f"{invocations(app_name)}/{invocation_id}")).status_code == 404


async def read_until(lines: AsyncIterator[str], stop: Callable[[list[Frame]], bool]) -> list[Frame]:
    """Reads SSE lines until ``stop(frames)`` holds (bounded by the caller's timeout)."""
    text = ""
    async for line in lines:
        text += line + "\n"
        if line == "":
            frames = parse_frames(text)
            if stop(frames):
                return frames
    return parse_frames(text)


def data_ids(frames: list[Frame]) -> list[int]:
    return [f.id for f in frames if f.event is None and f.id is not None]


async def test_reattach_with_after_loses_no_event_while_the_run_goes_on(
    make_app: Callable[..., Any], app_name: str
):
    with live_server(make_app(limits=Limits(heartbeat=0.05))) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                invocations(app_name),
                json={"new_message": user_text("slow 60 0.01"), "streaming": True},
            )
            url = f"{invocations(app_name)}/{started.json()['invocation_id']}/events"
            seen: list[Frame] = []
            async with asyncio.timeout(30):
                # Three connections, each dropped after a few events: the run never waits.
                for _ in range(3):
                    after = data_ids(seen)[-1] if seen else 0
                    async with http.stream("GET", f"{url}?after={after}") as stream:
                        frames = await read_until(
                            stream.aiter_lines(), lambda fs: len(data_ids(fs)) >= 5
                        )
                    seen += [f for f in frames if f.event is None]
                async with http.stream("GET", f"{url}?after={data_ids(seen)[-1]}") as stream:
                    rest = await read_until(
                        stream.aiter_lines(), lambda fs: bool(fs) and fs[-1].event == "end"
                    )
            seen += rest
            ids = data_ids(seen)
            assert ids == list(range(1, 62))  # 60 chunks and the final event, no gap or repeat
            final = Event.from_json(seen[-2].data or "")
            assert final.text() == "".join(f"tok{i} " for i in range(60))
            assert json.loads(seen[-1].data or "")["status"] == "completed"


async def test_heartbeats_are_comment_frames(make_app: Callable[..., Any], app_name: str):
    with live_server(make_app(limits=Limits(heartbeat=0.02))) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                invocations(app_name),
                json={"new_message": user_text("slow 3 0.3"), "streaming": True},
            )
            url = f"{invocations(app_name)}/{started.json()['invocation_id']}/events"
            async with asyncio.timeout(30), http.stream("GET", url) as stream:
                frames = await read_until(
                    stream.aiter_lines(), lambda fs: any(f.comments == ["ping"] for f in fs)
                )
            assert any(f.comments == ["ping"] for f in frames)


async def test_cancel_stops_the_run_and_stores_cancelled(
    make_app: Callable[..., Any], app_name: str
):
    with live_server(make_app()) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                invocations(app_name),
                json={"new_message": user_text("slow 10000 0.005"), "streaming": True},
            )
            invocation_id = started.json()["invocation_id"]
            url = f"{invocations(app_name)}/{invocation_id}"
            async with asyncio.timeout(30), http.stream("GET", f"{url}/events") as stream:
                lines = stream.aiter_lines()
                await read_until(lines, lambda fs: len(data_ids(fs)) >= 3)
                cancelled = await http.post(f"{url}:cancel")
                assert cancelled.status_code == 202
                rest = await read_until(lines, lambda fs: bool(fs) and fs[-1].event == "end")
            end = json.loads(rest[-1].data or "")
            assert end["status"] == "cancelled"
            last = Event.from_json(rest[-2].data or "")
            assert last.error_code == "CANCELLED" and last.invocation_id == invocation_id

            session = (await http.get(f"/apps/{app_name}/users/u1/sessions/s1")).json()
            stored = [Event.from_dict(e) for e in session["events"]]
            assert stored[-1].error_code == "CANCELLED"
            assert len(stored) == 2  # the user message and the record: no partial stored

            again = await http.post(f"{url}:cancel")
            assert again.status_code == 200 and again.json()["status"] == "cancelled"
            # The session stays valid: the next turn runs.
            reply = await http.post("/run", json=run_body(app_name, "hello"))
            assert reply.status_code == 200
            assert Event.from_dict(reply.json()[-1]).text() == "echo: hello"


async def test_disconnecting_does_not_stop_the_run(make_app: Callable[..., Any], app_name: str):
    with live_server(make_app()) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                "/run_sse", json=run_body(app_name, "slow 30 0.01", streaming=True)
            )
            assert started.status_code == 200  # read fully below
            # A /run_sse client that leaves early: open another and drop it after one frame.
            await new_session(http, app_name, sid="s2")
            async with asyncio.timeout(30):
                async with http.stream(
                    "POST",
                    "/run_sse",
                    json=run_body(app_name, "slow 30 0.01", sid="s2", streaming=True),
                ) as stream:
                    first = await read_until(stream.aiter_lines(), lambda fs: len(fs) >= 1)
                invocation_id = Event.from_json(first[0].data or "").invocation_id
                url = f"{invocations(app_name, sid='s2')}/{invocation_id}/events"
                async with http.stream("GET", url) as stream:
                    rest = await read_until(
                        stream.aiter_lines(), lambda fs: bool(fs) and fs[-1].event == "end"
                    )
            assert json.loads(rest[-1].data or "")["status"] == "completed"
            session = (await http.get(f"/apps/{app_name}/users/u1/sessions/s2")).json()
            assert session["events"][-1]["content"]["parts"][0]["text"].startswith("tok0 tok1")


async def test_a_run_on_a_busy_session_answers_409(make_app: Callable[..., Any], app_name: str):
    with live_server(make_app()) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                invocations(app_name), json={"new_message": user_text("slow 10000 0.005")}
            )
            invocation_id = started.json()["invocation_id"]
            for attempt in (
                http.post(invocations(app_name), json={"new_message": user_text("hi")}),
                http.post("/run", json=run_body(app_name, "hi")),
                http.post("/run_sse", json=run_body(app_name, "hi")),
                http.delete(f"/apps/{app_name}/users/u1/sessions/s1"),
            ):
                response = await attempt
                assert response.status_code == 409, response.text
            # Another session of the same user is not busy.
            await new_session(http, app_name, sid="s2")
            other = await http.post("/run", json=run_body(app_name, "hi", sid="s2"))
            assert other.status_code == 200
            url = f"{invocations(app_name)}/{invocation_id}"
            assert (await http.post(f"{url}:cancel")).status_code == 202
            async with asyncio.timeout(30), http.stream("GET", f"{url}/events") as stream:
                await read_until(
                    stream.aiter_lines(), lambda fs: bool(fs) and fs[-1].event == "end"
                )
            assert (await http.post("/run", json=run_body(app_name, "hi"))).status_code == 200


async def test_shutdown_cancels_running_invocations(make_app: Callable[..., Any], app_name: str):
    service = InMemorySessionService()
    with live_server(make_app(session_service=service)) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            await new_session(http, app_name)
            started = await http.post(
                invocations(app_name), json={"new_message": user_text("slow 10000 0.005")}
            )
            assert started.status_code == 202
    stored = service.get_session(app_name=app_name, user_id="u1", session_id="s1").run()
    assert stored.events[-1].error_code == "CANCELLED"


# -- isolation and security ---------------------------------------------------------------
async def test_another_users_session_is_404_on_every_route(
    client: httpx.AsyncClient, app_name: str
):
    await new_session(client, app_name, user="alice")
    started = await client.post(
        invocations(app_name, user="alice"), json={"new_message": user_text("hi")}
    )
    invocation_id = started.json()["invocation_id"]
    await client.get(f"{invocations(app_name, user='alice')}/{invocation_id}/events")
    bob = f"/apps/{app_name}/users/bob/sessions/s1"
    attempts = [
        client.get(bob),
        client.delete(bob),
        client.get(f"{bob}/artifacts"),
        client.get(f"{bob}/artifacts/note.txt"),
        client.post("/run", json=run_body(app_name, "hi", user="bob")),
        client.post("/run_sse", json=run_body(app_name, "hi", user="bob")),
        client.post(f"{bob}/invocations", json={"new_message": user_text("hi")}),
        client.get(f"{bob}/invocations/{invocation_id}"),
        client.get(f"{bob}/invocations/{invocation_id}/events"),
        client.post(f"{bob}/invocations/{invocation_id}:cancel"),
    ]
    for attempt in attempts:
        assert (await attempt).status_code == 404
    assert (await client.get(f"/apps/{app_name}/users/bob/sessions")).json() == []
    # An invocation id under another session of the same user is not found either.
    await new_session(client, app_name, user="alice", sid="s2")
    other = f"{invocations(app_name, user='alice', sid='s2')}/{invocation_id}"
    assert (await client.get(other)).status_code == 404


async def test_bearer_tokens_map_to_users(make_app: Callable[..., Any], app_name: str):
    app = make_app(tokens={"alice-token": "alice", "bob-token": "bob"}, web=True)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        alice = {"Authorization": "Bearer alice-token"}
        assert (await http.get("/list-apps")).status_code == 401
        missing = await http.get("/list-apps", headers={"Authorization": "Bearer wrong"})
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert (
            await http.get("/list-apps", headers={"Authorization": "Basic x"})
        ).status_code == 401
        assert (await http.get("/list-apps", headers=alice)).json() == [app_name]
        assert (await http.get("/")).status_code == 200  # the page holds no data

        sessions = f"/apps/{app_name}/users/alice/sessions"
        created = await http.post(sessions, json={"session_id": "s1"}, headers=alice)
        assert created.status_code == 200
        assert (await http.get(f"{sessions}/s1", headers=alice)).status_code == 200
        ran = await http.post("/run", json=run_body(app_name, "hi", user="alice"), headers=alice)
        assert ran.status_code == 200

        bob = {"Authorization": "Bearer bob-token"}
        assert (await http.get(f"{sessions}/s1", headers=bob)).status_code == 404
        assert (await http.get(sessions, headers=bob)).status_code == 404
        as_alice = run_body(app_name, "hi", user="alice")
        assert (await http.post("/run", json=as_alice, headers=bob)).status_code == 404
        assert (await http.get(f"{sessions}/s1")).status_code == 401


async def test_a_foreign_host_or_cross_site_origin_is_403(
    make_app: Callable[..., Any], app_name: str
):
    transport = httpx.ASGITransport(app=make_app(web=True))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        assert (await http.get("/list-apps")).status_code == 200
        foreign = await http.get("/list-apps", headers={"Host": "evil.example:8000"})
        assert foreign.status_code == 403
        assert (await http.get("/", headers={"Host": "evil.example"})).status_code == 403
        for origin in ("http://evil.example", "null", "http://127.0.0.1:9999"):
            response = await http.post(
                f"/apps/{app_name}/users/u1/sessions", headers={"Origin": origin}
            )
            assert response.status_code == 403, origin
        same = await http.get("/list-apps", headers={"Origin": "http://127.0.0.1:8000"})
        assert same.status_code == 200
        cross = await http.get("/list-apps", headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403
        localhost = await http.get("/list-apps", headers={"Host": "localhost:8000"})
        assert localhost.status_code == 200

    transport = httpx.ASGITransport(app=make_app(allowed_hosts=["agents.internal:8443"]))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        assert (await http.get("/list-apps")).status_code == 403
        named = await http.get("/list-apps", headers={"Host": "agents.internal:8443"})
        assert named.status_code == 200
        other_port = await http.get("/list-apps", headers={"Host": "agents.internal:9000"})
        assert other_port.status_code == 403


async def test_a_store_without_a_free_connection_answers_503_not_500(
    tmp_path: Path, make_app: Callable[..., Any], app_name: str
):
    svc = SqlSessionService(
        f"sqlite:///{tmp_path / 'busy.db'}", pool_size=1, max_overflow=0, pool_timeout=0.1
    )
    svc.create_session(app_name=app_name, user_id="u1", session_id="s1").run()
    transport = httpx.ASGITransport(app=make_app(session_service=svc))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        with svc.database.engine.connect():  # the pool's only connection, taken
            listed = await http.get(f"/apps/{app_name}/users/u1/sessions")
            ran = await http.post(
                "/run",
                json={
                    "app_name": app_name,
                    "user_id": "u1",
                    "session_id": "s1",
                    "new_message": user_text("hi"),
                },
            )
        assert (listed.status_code, ran.status_code) == (503, 503)
        assert "no database connection available" in listed.json()["detail"]
        assert (await http.get(f"/apps/{app_name}/users/u1/sessions")).status_code == 200
    svc.close()
