"""Gemini's thoughts and thought signatures survive storage and go back to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_rx import LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.sessions.sql import SqlSessionService

from ._fakes import FakeServer, json_reply, sse_reply
from .test_gemini import candidate, gemini

SIG_THOUGHT = "c2lnLXRob3VnaHQ="  # base64 of b"sig-thought"
SIG_CALL = "c2lnLWNhbGw="  # base64 of b"sig-call"


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather for a city."""
    return {"city": city, "sky": "sunny"}


@pytest.mark.parametrize("streaming", [False, True])
def test_a_stored_session_replayed_to_the_model_sends_the_signatures_back(
    server: FakeServer, tmp_path: Path, streaming: bool
) -> None:
    thought = {"text": "The user wants weather.", "thought": True}
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
    if streaming:
        first = sse_reply(
            [
                {
                    "candidates": [
                        candidate({"text": "The user wants ", "thought": True}, finish=None)
                    ]
                },
                {"candidates": [candidate({"text": "weather.", "thought": True}, finish=None)]},
                # Gemini may sign a thought in a last, empty piece of it.
                {
                    "candidates": [
                        candidate(
                            {"text": "", "thought": True, "thoughtSignature": SIG_THOUGHT},
                            finish=None,
                        )
                    ]
                },
                {"candidates": [candidate({**call, "thoughtSignature": SIG_CALL})]},
            ]
        )
        answer = lambda text: sse_reply([{"candidates": [candidate({"text": text})]}])  # noqa: E731
    else:
        first = json_reply(
            {
                "candidates": [
                    candidate(
                        {**thought, "thoughtSignature": SIG_THOUGHT},
                        {**call, "thoughtSignature": SIG_CALL},
                    )
                ]
            }
        )
        answer = lambda text: json_reply({"candidates": [candidate({"text": text})]})  # noqa: E731
    server.push(first, answer("Sunny in Oslo."), answer("Still sunny."))
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE

    def turn(question: str) -> None:
        # A new store and Runner each turn: the history comes back from the database.
        agent = LlmAgent(name="weather", model=gemini(server), tools=[get_weather])
        runner = Runner(agent=agent, app_name="thinking", session_service=SqlSessionService(url))
        config = RunConfig(auto_create_session=True, streaming_mode=mode)
        events = list(
            runner.run(user_id="u", session_id="s", new_message=question, run_config=config)
        )
        assert all(e.error_code is None for e in events)

    turn("Weather in Oslo?")
    turn("And now?")

    assert len(server.exchanges) == 3
    for exchange in server.exchanges[1:]:
        model_turn = exchange.json()["contents"][1]
        assert model_turn["role"] == "model"
        assert model_turn["parts"] == [
            {**thought, "thoughtSignature": SIG_THOUGHT},
            {**call, "thoughtSignature": SIG_CALL},
        ]
