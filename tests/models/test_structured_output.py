"""An agent's output_schema reaches each provider's wire format (scripted local servers)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from adk_rx import InMemoryRunner, LlmAgent, RunConfig
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from tests.spine_support import text

from ._fakes import FakeServer, json_reply


class Weather(BaseModel):
    city: str
    celsius: int


def run_turn(agent: LlmAgent) -> dict[str, object]:
    runner = InMemoryRunner(agent, app_name="app")
    events = list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message=text("weather in Oslo?"),
            run_config=RunConfig(auto_create_session=True),
        )
    )
    session = runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert events[-1].is_final_response()
    return dict(session.run().state)


def test_gemini_gets_the_json_mime_type_and_the_schema(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    server.push(
        json_reply(
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": '{"city": "Oslo", "celsius": 3}'}],
                        },
                        "finishReason": "STOP",
                    }
                ]
            }
        )
    )
    model = GeminiLlm("gemini-test", http_options={"base_url": server.url}, retry=None)
    agent = LlmAgent(name="forecaster", model=model, output_schema=Weather, output_key="w")
    state = run_turn(agent)
    config = server.exchanges[0].json()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == Weather.model_json_schema()
    assert state["w"] == {"city": "Oslo", "celsius": 3}


def test_openai_compatible_servers_get_a_json_schema_response_format(server: FakeServer) -> None:
    server.push(
        json_reply(
            {
                "id": "c1",
                "object": "chat.completion",
                "model": "llama-test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": '{"city":"Oslo","celsius":3}'},
                        "finish_reason": "stop",
                    }
                ],
            }
        )
    )
    model = OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", api_key="k", retry=None)
    agent = LlmAgent(name="forecaster", model=model, output_schema=Weather, output_key="w")
    state = run_turn(agent)
    body = server.exchanges[0].json()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": Weather.model_json_schema()},
    }
    assert state["w"] == {"city": "Oslo", "celsius": 3}
