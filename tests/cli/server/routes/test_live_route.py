"""``/run_live``: google-adk's WebSocket route, driven by a real WebSocket client against a
real server."""

from __future__ import annotations

import json
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from adk_rx import Event, InMemorySessionService
from adk_rx.cli.server import create_app
from adk_rx.cli.server.errors import RequestRejectedError
from adk_rx.cli.server.limits import Limits
from adk_rx.cli.server.routes.live_route import parse_frame
from tests.cli.server_support import LiveServer, live_server, unique_app

LIVE_AGENT = textwrap.dedent('''
    import threading

    from google.genai import types

    from adk_rx import LlmAgent, LlmResponse
    from adk_rx.testing import ScriptedLiveLlm

    RELEASE = threading.Event()


    def get_weather(city: str) -> dict:
        """Returns the forecast for a city."""
        return {"city": city, "forecast": "sunny"}


    def hold(seconds: int) -> dict:
        """Waits until released."""
        RELEASE.wait(seconds)
        return {"held": seconds}


    def call(name, **args):
        part = types.Part(function_call=types.FunctionCall(name=name, args=args))
        return LlmResponse(content=types.Content(role="model", parts=[part]))


    def respond(content):
        part = content.parts[-1]
        if part.function_response is not None:
            body = part.function_response.response or {}
            return f"It is {body.get('forecast', '?')} in {body.get('city', '?')}."
        text = part.text or ""
        if text.startswith("weather "):
            return call("get_weather", city=text.removeprefix("weather "))
        if text == "hold":
            return call("hold", seconds=30)
        if text == "barge in":
            return ["Once upon", LlmResponse(interrupted=True), LlmResponse(turn_complete=True)]
        return [f"echo: ", text]


    root_agent = LlmAgent(
        name="voice",
        model=ScriptedLiveLlm([respond] * 10_000),
        instruction="You talk.",
        tools=[get_weather, hold],
    )
''')


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, str, InMemorySessionService]]:
    app = unique_app("live")
    (tmp_path / app).mkdir()
    (tmp_path / app / "agent.py").write_text(LIVE_AGENT)
    sessions = InMemorySessionService()
    with live_server(
        create_app(tmp_path, session_service=sessions, tokens={"t-alice": "alice"})
    ) as server:
        yield server, app, sessions


def create_session(server: LiveServer, app: str, user: str = "alice") -> str:
    response = httpx.post(
        f"{server.url}/apps/{app}/users/{user}/sessions",
        json={},
        headers={"Authorization": "Bearer t-alice"},
    )
    assert response.status_code == 200, response.text
    return response.json()["id"]


def ws_url(
    server: LiveServer, app: str, sid: str, user: str = "alice", token: str = "t-alice"
) -> str:
    base = server.url.replace("http://", "ws://")
    return f"{base}/run_live?app_name={app}&user_id={user}&session_id={sid}&access_token={token}"


def send_text(ws: ClientConnection, text: str) -> None:
    ws.send(json.dumps({"content": {"role": "user", "parts": [{"text": text}]}}))


def events_until(ws: ClientConnection, done: Any) -> list[Event]:
    events: list[Event] = []
    while True:
        event = Event.from_json(ws.recv(timeout=10))
        events.append(event)
        if done(event):
            return events


def test_a_text_turn_and_a_tool_turn_over_the_websocket(
    served: tuple[LiveServer, str, InMemorySessionService],
) -> None:
    server, app, sessions = served
    sid = create_session(server, app)

    with connect(ws_url(server, app, sid)) as ws:
        send_text(ws, "hello")
        first = events_until(ws, lambda e: bool(e.turn_complete))
        send_text(ws, "weather Oslo")
        second = events_until(ws, lambda e: bool(e.turn_complete))
        ws.send(json.dumps({"close": True}))
        with pytest.raises(ConnectionClosed):  # the server ends the session and closes
            ws.recv(timeout=10)

    assert [e.text() for e in first if e.text()] == ["hello", "echo: ", "hello", "echo: hello"]
    texts = [e.text() for e in second if e.text() and not e.partial]
    assert texts == ["weather Oslo", "It is sunny in Oslo."]
    assert any(e.get_function_calls() for e in second)
    stored = sessions.get_session(app_name=app, user_id="alice", session_id=sid).run()
    assert stored is not None
    assert [e.text() for e in stored.events if e.text()] == [
        "hello",
        "echo: hello",
        "weather Oslo",
        "It is sunny in Oslo.",
    ]


def test_an_interrupted_answer_still_ends_its_turn_for_the_client(
    served: tuple[LiveServer, str, InMemorySessionService],
) -> None:
    server, app, _ = served
    sid = create_session(server, app)

    with connect(ws_url(server, app, sid)) as ws:
        send_text(ws, "barge in")
        events = events_until(ws, lambda e: bool(e.turn_complete))
        send_text(ws, "hello")  # the next turn is answered as usual
        events_until(ws, lambda e: bool(e.turn_complete))

    assert [e.author for e in events] == ["user", "voice", "voice", "voice"]
    assert events[2].interrupted and events[3].turn_complete and not events[3].interrupted


def test_a_client_that_disconnects_mid_answer_leaves_a_valid_session(
    served: tuple[LiveServer, str, InMemorySessionService],
) -> None:
    server, app, sessions = served
    sid = create_session(server, app)

    with connect(ws_url(server, app, sid)) as ws:
        send_text(ws, "hold")
        events_until(ws, lambda e: bool(e.get_function_calls()))
    # the tool is still holding; the client is gone

    stored = None
    for _ in range(100):
        stored = sessions.get_session(app_name=app, user_id="alice", session_id=sid).run()
        responses = [r for e in stored.events for r in e.get_function_responses()]  # type: ignore[union-attr]
        if responses:
            break
        threading.Event().wait(0.05)
    assert stored is not None
    [response] = [r for e in stored.events for r in e.get_function_responses()]
    assert response.response == {"error": "cancelled"}


def test_bad_parameters_foreign_users_tokens_and_hosts_are_refused(
    served: tuple[LiveServer, str, InMemorySessionService],
) -> None:
    server, app, _ = served
    sid = create_session(server, app)

    for url, headers, status in [
        (ws_url(server, app, sid, token="wrong"), {}, 403),
        (ws_url(server, app, sid, user="bob"), {}, 404),
        (ws_url(server, app, "no-such-session"), {}, 404),
        (ws_url(server, "no_such_app", sid), {}, 404),
        (ws_url(server, app, sid), {"Origin": "https://evil.example"}, 403),
    ]:
        with pytest.raises(InvalidStatus) as refused, connect(url, additional_headers=headers):
            pass
        assert refused.value.response.status_code == status, url


def test_a_frame_that_is_not_a_live_request_closes_the_socket(
    served: tuple[LiveServer, str, InMemorySessionService],
) -> None:
    server, app, _ = served
    sid = create_session(server, app)

    with connect(ws_url(server, app, sid)) as ws:
        ws.send('{"content": 42}')
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)

    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003


def test_the_route_itself_refuses_a_frame_over_the_body_limit(tmp_path: Path) -> None:
    # This uvicorn has its default 16 MiB frame bound; the route applies the server's own.
    app = unique_app("live")
    (tmp_path / app).mkdir()
    (tmp_path / app / "agent.py").write_text(LIVE_AGENT)
    sessions = InMemorySessionService()
    limits = Limits(max_body_bytes=4096)
    tokens = {"t-alice": "alice"}
    with live_server(
        create_app(tmp_path, session_service=sessions, tokens=tokens, limits=limits)
    ) as server:
        sid = create_session(server, app)
        with connect(ws_url(server, app, sid)) as ws:
            send_text(ws, "x" * 5000)
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        assert "larger than 4096 bytes" in closed.value.rcvd.reason

        with connect(ws_url(server, app, sid)) as ws:  # the session was released
            send_text(ws, "hello")
            events_until(ws, lambda e: bool(e.turn_complete))

    stored = sessions.get_session(app_name=app, user_id="alice", session_id=sid).run()
    assert stored is not None
    assert [e.text() for e in stored.events if e.text()] == ["hello", "echo: hello"]


def test_the_part_count_of_a_frame_is_checked_before_the_parts_are_built() -> None:
    # 40,000 empty parts fit in a frame and within the item limit; building each as a Part
    # took 0.6 s of CPU, 690,000 of them (2 MB) 11 s.
    frame = json.dumps({"content": {"role": "user", "parts": [{}] * 40_000}})
    started = time.process_time()
    with pytest.raises(RequestRejectedError, match="40000 parts"):
        parse_frame(frame, Limits())
    assert time.process_time() - started < 0.4
