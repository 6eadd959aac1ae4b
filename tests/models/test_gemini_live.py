"""GeminiLlm.connect through google-genai's live client against a Gemini Live protocol
server on 127.0.0.1, and run_live end to end on it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types
from reactivex.scheduler import ImmediateScheduler

from adk_rx import Event, InMemoryRunner, LiveRequestQueue, LlmAgent, RunConfig
from adk_rx.models.gemini import GeminiLlm

from ._live_server import LiveServer


@pytest.fixture
def live() -> Iterator[LiveServer]:
    server = LiveServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def gemini(live: LiveServer) -> GeminiLlm:
    return GeminiLlm(
        "gemini-live-test",
        http_options={"base_url": live.url, "async_client_args": {"ssl": live.client_ssl}},
    )


def text_turn(*chunks: str) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = [
        {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": c}]}}} for c in chunks
    ]
    replies.append({"serverContent": {"turnComplete": True}})
    return replies


def weather(city: str) -> dict[str, str]:
    """Weather in a city."""
    return {"city": city, "sky": "sunny"}


class Collector:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.error: Exception | None = None
        self.done = threading.Event()
        self.changed = threading.Condition()

    def on_next(self, event: Event) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def on_error(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def wait_for(self, match: Any) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: any(match(e) for e in self.events), 10)


def start(
    live: LiveServer, agent: LlmAgent, config: RunConfig | None = None
) -> tuple[LiveRequestQueue, Collector, Any, InMemoryRunner]:
    runner = InMemoryRunner(agent=agent)
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    got = Collector()
    subscription = runner.run_live(
        user_id="u",
        session_id="s",
        live_request_queue=queue,
        run_config=config or RunConfig(auto_create_session=True, response_modalities=["TEXT"]),
    ).subscribe(on_next=got.on_next, on_error=got.on_error, on_completed=got.done.set)
    return queue, got, subscription, runner


def test_a_text_turn_over_the_live_protocol(live: LiveServer) -> None:
    live.script.append(text_turn("Hel", "lo!"))
    agent = LlmAgent(name="talker", model=gemini(live), instruction="Be brief.")
    queue, got, _, runner = start(live, agent)

    queue.send_content(types.Content(role="user", parts=[types.Part(text="hi")]))
    got.wait_for(lambda e: e.turn_complete)
    queue.close()

    assert got.done.wait(10) and got.error is None
    [setup] = live.of_kind("setup")
    assert setup["model"] == "models/gemini-live-test"
    assert "Be brief." in setup["system_instruction"]["parts"][0]["text"]
    assert setup["generation_config"]["response_modalities"] == ["TEXT"]
    assert live.paths[0].endswith("GenerativeService.BidiGenerateContent?key=test-key") or (
        "BidiGenerateContent" in live.paths[0]
    )
    [content] = live.of_kind("client_content")
    assert content["turns"][-1]["parts"][0]["text"] == "hi" and content["turn_complete"]
    texts = [(e.text(), bool(e.partial)) for e in got.events if e.author == "talker" and e.text()]
    assert texts == [("Hel", True), ("lo!", True), ("Hello!", False)]
    stored = runner.session_service.get_session(
        app_name="talker", user_id="u", session_id="s"
    ).run()
    assert stored is not None
    assert [(e.author, e.text()) for e in stored.events] == [("user", "hi"), ("talker", "Hello!")]
    assert live.closed.wait(10)  # close() closed the WebSocket


def test_tool_calls_come_back_as_tool_responses_and_audio_goes_as_realtime_input(
    live: LiveServer,
) -> None:
    live.script.append(
        [
            {
                "toolCall": {
                    "functionCalls": [{"id": "c1", "name": "weather", "args": {"city": "Oslo"}}]
                }
            }
        ]
    )
    live.script.append(text_turn("Sunny in Oslo."))
    agent = LlmAgent(name="wx", model=gemini(live), tools=[weather])
    queue, got, _, _ = start(live, agent)

    queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=b"\x00\x01"))
    queue.send_content(types.Content(role="user", parts=[types.Part(text="weather?")]))
    got.wait_for(lambda e: e.text() == "Sunny in Oslo." and not e.partial)
    queue.close()

    assert got.done.wait(10) and got.error is None
    [audio] = live.of_kind("realtime_input")
    assert audio["audio"]["mime_type"] == "audio/pcm;rate=16000"
    [tool_response] = live.of_kind("tool_response")
    [answer] = tool_response["function_responses"]
    assert answer["id"] == "c1" and answer["response"] == {"city": "Oslo", "sky": "sunny"}
    [setup] = live.of_kind("setup")
    declared = setup["tools"][0]["function_declarations"]
    assert [d["name"] for d in declared] == ["weather"]


def test_interruption_and_transcriptions_reach_events(live: LiveServer) -> None:
    live.script.append(
        [
            {"serverContent": {"inputTranscription": {"text": "tell me", "finished": True}}},
            {"serverContent": {"modelTurn": {"parts": [{"text": "Once upon"}]}}},
            {"serverContent": {"outputTranscription": {"text": "Once upon"}}},
            {"serverContent": {"interrupted": True}},
        ]
    )
    agent = LlmAgent(name="teller", model=gemini(live))
    queue, got, _, runner = start(live, agent)

    queue.send_content(types.Content(role="user", parts=[types.Part(text="story")]))
    got.wait_for(lambda e: e.interrupted)
    queue.close()

    assert got.done.wait(10) and got.error is None
    heard = [e for e in got.events if e.input_transcription is not None]
    assert heard and heard[0].input_transcription.text == "tell me" and not heard[0].partial  # type: ignore[union-attr]
    said = [e for e in got.events if e.output_transcription is not None]
    assert said and said[0].partial
    stored = runner.session_service.get_session(
        app_name="teller", user_id="u", session_id="s"
    ).run()
    assert stored is not None
    assert not [e for e in stored.events if e.text() == "Once upon"]  # interrupted: never stored


def test_disposing_the_run_closes_the_websocket(live: LiveServer) -> None:
    agent = LlmAgent(name="quiet", model=gemini(live))
    queue, _, subscription, runner = start(live, agent)
    queue.send_content(types.Content(role="user", parts=[types.Part(text="hello?")]))
    assert live.wait_for("client_content")  # the session is open and talking

    subscription.dispose()

    assert live.closed.wait(5)
    runner.when_idle(user_id="u", session_id="s").run()
    stored = runner.session_service.get_session(app_name="quiet", user_id="u", session_id="s").run()
    assert stored is not None and stored.events[-1].error_code == "CANCELLED"
