"""AnthropicLlm with the real anthropic client against a scripted Messages API server."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

import pytest
import reactivex.operators as ops
from google.genai import types

from adk_rx import LlmAgent, LlmRegistry, RunConfig, Runner, StreamingMode
from adk_rx.errors import CircuitOpenError, ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.models.anthropic_llm import AnthropicLlm
from adk_rx.models.anthropic_messages import CACHE_WRITE_TOKENS
from adk_rx.models.circuit_breaker import CircuitBreakerLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import RetryPolicy
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.testing import simplify_events

from ._claude import (
    block_start,
    block_stop,
    delta,
    event,
    finish,
    message,
    start,
    streamed,
    streamed_text,
    text,
    thinking,
    tool_use,
)
from ._fakes import FakeServer, VirtualClock, json_reply, unfinished_tasks

FAST = RetryPolicy(max_attempts=3, initial_delay=0.5, multiplier=2.0, jitter=0.0)

WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="Weather for a city",
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={"city": types.Schema(type=types.Type.STRING)},
                required=["city"],
            ),
        )
    ]
)


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def claude(server: FakeServer, **options: Any) -> AnthropicLlm:
    options.setdefault("retry", None)
    return AnthropicLlm("claude-test", api_key="sk-ant-test", base_url=server.url, **options)


def text_request(value: str = "hello") -> LlmRequest:
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=value)])])
    request.append_instructions(["You are terse."])
    return request


def run(observable: Any) -> list[LlmResponse]:
    return observable.pipe(ops.to_list()).run()


def test_text_turn_sends_system_messages_tools_and_maps_usage_with_cache_tokens(
    server: FakeServer,
) -> None:
    server.push(
        message(
            text("Hi there"),
            cache_read_input_tokens=100,
            cache_creation_input_tokens=20,
            output_tokens_details={"thinking_tokens": 1},
        )
    )
    request = text_request()
    request.config.tools = [WEATHER]
    request.config.temperature = 0.25
    request.config.max_output_tokens = 256

    [response] = run(claude(server).generate_content(request))

    assert response.get_text() == "Hi there" and response.finish_reason == "STOP"
    usage = response.usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 9 + 100 + 20  # every input token billed
    assert usage.cached_content_token_count == 100
    assert (usage.candidates_token_count, usage.thoughts_token_count) == (2, 1)
    assert usage.total_token_count == 129 + 3
    assert response.custom_metadata == {CACHE_WRITE_TOKENS: 20}
    [exchange] = server.exchanges
    assert exchange.path == "/v1/messages"
    # The key goes as x-api-key or, in recent clients, as a bearer token.
    assert "sk-ant-test" in (
        exchange.headers.get("x-api-key"),
        exchange.headers["authorization"][7:],
    )
    assert "anthropic-version" in exchange.headers
    body = exchange.json()
    assert body["system"] == "You are terse."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert (body["max_tokens"], body["temperature"], body["model"]) == (256, 0.25, "claude-test")
    [tool] = body["tools"]
    assert tool["name"] == "get_weather" and tool["input_schema"]["required"] == ["city"]
    assert "cache_control" not in str(body)  # no caching asked for


def test_parallel_tool_calls_and_their_results_round_trip_with_ids(server: FakeServer) -> None:
    server.push(
        message(
            text("Checking both."),
            tool_use("toolu_1", "get_weather", city="Oslo"),
            tool_use("toolu_2", "get_weather", city="Rome"),
            stop="tool_use",
        ),
        message(text("Sunny in both.")),
    )
    llm = claude(server)
    request = text_request("Oslo and Rome?")
    request.config.tools = [WEATHER]

    [first] = run(llm.generate_content(request))
    assert first.content is not None and first.content.parts is not None
    calls = [p.function_call for p in first.content.parts if p.function_call]
    assert [(c.id, c.args) for c in calls] == [
        ("toolu_1", {"city": "Oslo"}),
        ("toolu_2", {"city": "Rome"}),
    ]
    assert first.finish_reason == "STOP" and first.error_code is None
    request.contents.append(first.content)
    request.contents.append(
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=c.id, name=c.name, response={"sky": "sunny"}
                    )
                )
                for c in calls
            ],
        )
    )
    run(llm.generate_content(request))

    messages = server.exchanges[1].json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use", "tool_use"]
    results = messages[2]["content"]
    assert [(r["type"], r["tool_use_id"]) for r in results] == [
        ("tool_result", "toolu_1"),
        ("tool_result", "toolu_2"),
    ]
    assert results[0]["content"] == '{"sky": "sunny"}'


def test_streaming_reassembles_tool_inputs_and_keeps_thinking_signatures(
    server: FakeServer,
) -> None:
    server.push(
        streamed(
            [
                start(cache_read_input_tokens=50),
                block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
                delta(0, "thinking_delta", thinking="Two cities, "),
                delta(0, "thinking_delta", thinking="two calls."),
                delta(0, "signature_delta", signature="sig-"),
                delta(0, "signature_delta", signature="abc"),
                block_stop(0),
                block_start(1, {"type": "text", "text": ""}),
                delta(1, "text_delta", text="Looking "),
                delta(1, "text_delta", text="up."),
                block_stop(1),
                block_start(
                    2, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
                ),
                delta(2, "input_json_delta", partial_json=""),
                delta(2, "input_json_delta", partial_json='{"ci'),
                block_start(
                    3, {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}}
                ),
                delta(3, "input_json_delta", partial_json='{"city": "Rome"}'),
                delta(2, "input_json_delta", partial_json='ty": "Oslo"}'),
                block_stop(2),
                block_stop(3),
                event("ping"),
                *finish("tool_use", output_tokens=40),
            ]
        )
    )

    responses = run(claude(server).generate_content(text_request(), stream=True))

    partials = [r for r in responses if r.partial]
    assert [(p.content.parts[0].text, p.content.parts[0].thought) for p in partials] == [  # type: ignore[index,union-attr]
        ("Two cities, ", True),
        ("two calls.", True),
        ("Looking ", None),
        ("up.", None),
    ]
    final = responses[-1]
    assert final.partial is False and final.turn_complete
    parts = final.content.parts  # type: ignore[union-attr]
    assert parts is not None and len(parts) == 4
    assert (parts[0].text, parts[0].thought, parts[0].thought_signature) == (
        "Two cities, two calls.",
        True,
        b"sig-abc",
    )
    assert parts[1].text == "Looking up."
    assert [(p.function_call.id, p.function_call.args) for p in parts[2:]] == [  # type: ignore[union-attr]
        ("toolu_1", {"city": "Oslo"}),
        ("toolu_2", {"city": "Rome"}),
    ]
    usage = final.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.cached_content_token_count) == (59, 50)
    assert usage.candidates_token_count == 40
    assert server.exchanges[0].json()["stream"] is True


def test_images_and_unreadable_attachments(server: FakeServer) -> None:
    server.push(message(text("A red dot.")))
    png = b"\x89PNG fake"
    request = LlmRequest(
        contents=[
            types.Content(
                role="user",
                parts=[
                    types.Part(text="What is this?"),
                    types.Part(inline_data=types.Blob(mime_type="image/png", data=png)),
                    types.Part(inline_data=types.Blob(mime_type="audio/wav", data=b"RIFF")),
                ],
            )
        ]
    )

    run(claude(server).generate_content(request))

    blocks = server.exchanges[0].json()["messages"][0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(png).decode(),
        },
    }
    assert blocks[2]["type"] == "text" and "audio/wav" in blocks[2]["text"]


def test_thinking_without_a_budget_is_a_clear_error(server: FakeServer) -> None:
    request = text_request()
    request.config.thinking_config = types.ThinkingConfig(include_thoughts=True)

    with pytest.raises(ConfigurationError, match="thinking_budget"):
        run(claude(server).generate_content(request))
    assert server.exchanges == []


def test_a_thinking_budget_is_sent_without_sampling_settings(server: FakeServer) -> None:
    server.push(message(text("ok")))
    request = text_request()
    request.config.temperature = 0.3
    request.config.thinking_config = types.ThinkingConfig(thinking_budget=2048)

    run(claude(server).generate_content(request))

    body = server.exchanges[0].json()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body


def test_429_with_retry_after_waits_that_long_then_succeeds(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply(
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
            429,
            {"retry-after": "7"},
        ),
        message(text("ok")),
    )
    llm = claude(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [response] = clock.run(llm.generate_content(text_request()))

    assert response.get_text() == "ok"
    [notice] = clock.notices
    assert notice.delay == 7.0 and notice.error.status == 429 and "Slow down" in str(notice.error)
    assert len(server.exchanges) == 2


def test_a_400_is_not_retried(server: FakeServer) -> None:
    server.push(
        json_reply(
            {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}, 400
        )
    )

    with pytest.raises(ModelError) as caught:
        run(claude(server, retry=FAST).generate_content(text_request()))

    assert caught.value.status == 400 and not caught.value.retryable
    assert len(server.exchanges) == 1


def test_an_overload_event_mid_stream_is_a_retryable_model_error(server: FakeServer) -> None:
    server.push(
        streamed(
            [start(), event("error", error={"type": "overloaded_error", "message": "Overloaded"})]
        )
    )

    with pytest.raises(ModelError) as caught:
        run(claude(server).generate_content(text_request(), stream=True))

    assert caught.value.status == 529 and caught.value.retryable
    assert "Overloaded" in str(caught.value)


def test_the_circuit_breaker_opens_on_repeated_overloads(server: FakeServer) -> None:
    overloaded = json_reply(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529
    )
    server.push(overloaded, overloaded)
    guarded = CircuitBreakerLlm(claude(server), failure_threshold=2, cooldown=60)

    for _ in range(2):
        with pytest.raises(ModelError):
            run(guarded.generate_content(text_request()))
    with pytest.raises(CircuitOpenError):
        run(guarded.generate_content(text_request()))
    assert len(server.exchanges) == 2


def test_disposing_during_a_slow_stream_closes_the_http_request(server: FakeServer) -> None:
    server.push(
        streamed(
            [
                start(),
                block_start(0, {"type": "text", "text": ""}),
                delta(0, "text_delta", text="s"),
            ],
            hang=True,
        )
    )
    got_partial = threading.Event()

    subscription = (
        claude(server)
        .generate_content(text_request(), stream=True)
        .subscribe(lambda _: got_partial.set())
    )
    assert got_partial.wait(10)
    subscription.dispose()

    assert server.disconnected.wait(10)
    assert unfinished_tasks() == set()


def test_a_missing_key_fails_the_call_before_any_traffic(server: FakeServer) -> None:
    llm = AnthropicLlm("claude-test", base_url=server.url, retry=None)

    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        run(llm.generate_content(text_request()))
    assert server.exchanges == []


def test_the_real_endpoint_is_refused_while_real_calls_are_off() -> None:
    llm = AnthropicLlm("claude-sonnet-4-5", api_key="sk-ant-test", retry=None)

    with pytest.raises(ConfigurationError, match="real model calls are disabled"):
        run(llm.generate_content(text_request()))


def test_claude_names_resolve_to_anthropic_llm() -> None:
    model = LlmRegistry.resolve("claude-sonnet-4-5")

    assert isinstance(model, AnthropicLlm) and model.model == "claude-sonnet-4-5"


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather for a city."""
    return {"city": city, "sky": "sunny"}


@pytest.mark.parametrize("streaming", [False, True])
def test_thinking_signatures_round_trip_through_a_stored_session(
    server: FakeServer, tmp_path: Path, streaming: bool
) -> None:
    if streaming:
        first = streamed(
            [
                start(),
                block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
                delta(0, "thinking_delta", thinking="Need the tool."),
                delta(0, "signature_delta", signature="c2lnLTE="),
                block_stop(0),
                block_start(1, {"type": "redacted_thinking", "data": "b3BhcXVl"}),
                block_stop(1),
                block_start(
                    2, {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}
                ),
                delta(2, "input_json_delta", partial_json='{"city": "Oslo"}'),
                block_stop(2),
                *finish("tool_use"),
            ]
        )
    else:
        first = message(
            thinking("Need the tool.", "c2lnLTE="),
            {"type": "redacted_thinking", "data": "b3BhcXVl"},
            tool_use("toolu_9", "get_weather", city="Oslo"),
            stop="tool_use",
        )
    answer = streamed_text if streaming else (lambda value: message(text(value)))
    server.push(first, answer("Sunny in Oslo."), answer("Still sunny."))
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE

    def turn(question: str) -> None:
        # A new service and Runner each turn: the history comes back from the database.
        agent = LlmAgent(name="weather", model=claude(server), tools=[get_weather])
        runner = Runner(agent=agent, app_name="claude", session_service=SqlSessionService(url))
        config = RunConfig(auto_create_session=True, streaming_mode=mode)
        events = runner.run(user_id="u", session_id="s", new_message=question, run_config=config)
        assert all(e.error_code is None for e in events)

    turn("Weather in Oslo?")
    turn("And now?")

    expected = [
        {"type": "thinking", "thinking": "Need the tool.", "signature": "c2lnLTE="},
        {"type": "redacted_thinking", "data": "b3BhcXVl"},
        {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}},
    ]
    for exchange in server.exchanges[1:]:
        messages = exchange.json()["messages"]
        assert messages[1] == {"role": "assistant", "content": expected}
        assert messages[2]["content"][0]["tool_use_id"] == "toolu_9"
    assert len(server.exchanges) == 3


def test_a_tool_turn_through_the_runner_streams_text(server: FakeServer) -> None:
    server.push(
        streamed(
            [
                start(),
                block_start(
                    0, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
                ),
                delta(0, "input_json_delta", partial_json='{"city": '),
                delta(0, "input_json_delta", partial_json='"Oslo"}'),
                block_stop(0),
                *finish("tool_use"),
            ]
        ),
        streamed_text("Sunny in Oslo."),
    )
    agent = LlmAgent(name="weather", model=claude(server), tools=[get_weather])
    runner = Runner(agent=agent, app_name="claude", session_service=SqlSessionService("sqlite://"))

    events = list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="Weather in Oslo?",
            run_config=RunConfig(auto_create_session=True, streaming_mode=StreamingMode.SSE),
        )
    )

    assert simplify_events([e for e in events if not e.partial]) == [
        'weather: FunctionCall(get_weather, {"city": "Oslo"})',
        'weather: FunctionResponse(get_weather, {"city": "Oslo", "sky": "sunny"})',
        "weather: Sunny in Oslo.",
    ]
    assert simplify_events([e for e in events if e.partial]) == [
        "weather: Sunny i",
        "weather: n Oslo.",
    ]


def test_a_cache_config_marks_the_tools_the_system_and_the_stable_history(
    server: FakeServer,
) -> None:
    from adk_rx.models.context_cache import ContextCacheConfig

    server.push(message(text("ok")), message(text("ok")))
    request = text_request("Q1")
    request.config.tools = [WEATHER]
    request.contents += [
        types.Content(
            role="model",
            parts=[
                types.Part(text="Thinking.", thought=True, thought_signature=b"sig"),
                types.Part(text="A1"),
            ],
        ),
        types.Content(role="user", parts=[types.Part(text="[dynamic instruction]")]),
        types.Content(role="user", parts=[types.Part(text="Q2")]),
    ]
    request.cache_config = ContextCacheConfig(ttl_seconds=3600)

    run(claude(server).generate_content(request))
    request.cache_config = ContextCacheConfig(min_tokens=10_000)
    run(claude(server).generate_content(request))

    hour = {"type": "ephemeral", "ttl": "1h"}
    body = server.exchanges[0].json()
    assert body["tools"][-1]["cache_control"] == hour
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": hour}]
    messages = body["messages"]
    # The last block before this turn's user messages; never a thinking block.
    assert messages[1]["content"][1] == {"type": "text", "text": "A1", "cache_control": hour}
    assert "cache_control" not in str(messages[0]) + str(messages[2:])
    assert "cache_control" not in str(server.exchanges[1].json())  # under min_tokens
