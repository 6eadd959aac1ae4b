"""LiteLlm with the real litellm package against a scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex.operators as ops
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, RunConfig, StreamingMode
from adk_rx.errors import ConfigurationError, ModelError
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import RetryPolicy
from adk_rx.testing import simplify_events

from ._fakes import FakeServer, VirtualClock, json_reply, sse_reply, unfinished_tasks

pytest.importorskip("litellm")

from adk_rx.models.lite_llm import LiteLlm
from adk_rx.rx import runtime_loop

FAST = RetryPolicy(max_attempts=3, initial_delay=0.5, multiplier=2.0, jitter=0.0)
USAGE = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}


@pytest.fixture(autouse=True, scope="module")
def _stop_litellm_logging_worker() -> Any:
    """litellm starts a logging task on the loop of its first call (adk_rx's background loop)
    and never ends it; stop it after this module so later tests that count that loop's tasks
    see none."""
    yield
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    asyncio.run_coroutine_threadsafe(GLOBAL_LOGGING_WORKER.stop(), runtime_loop()).result(10)


def local(server: FakeServer, **options: Any) -> LiteLlm:
    options.setdefault("retry", None)
    return LiteLlm("openai/llama-test", api_base=f"{server.url}/v1", api_key="sk-local", **options)


def text_request(text: str = "hello") -> LlmRequest:
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    request.append_instructions(["You are terse."])
    return request


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "llama-test",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        "usage": USAGE,
    }


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "llama-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def run(observable: Any) -> list[LlmResponse]:
    return observable.pipe(ops.to_list()).run()


def test_a_text_turn_goes_through_litellm_to_the_server(server: FakeServer) -> None:
    server.push(json_reply(completion({"content": "Hi there"})))

    [response] = run(local(server, temperature=0.5).generate_content(text_request()))

    assert response.get_text() == "Hi there" and response.finish_reason == "STOP"
    assert response.usage_metadata is not None
    assert response.usage_metadata.total_token_count == 12
    [exchange] = server.exchanges
    assert exchange.path == "/v1/chat/completions"
    body = exchange.json()
    assert body["model"] == "llama-test" and body["temperature"] == 0.5
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hello"},
    ]


def test_streamed_tool_call_fragments_are_reassembled(server: FakeServer) -> None:
    server.push(
        sse_reply(
            [
                chunk({"role": "assistant", "content": "Let me "}),
                chunk({"content": "check."}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"ci'},
                            }
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}),
                chunk({}, finish="tool_calls"),
                "data: [DONE]\n\n",
            ]
        )
    )

    responses = run(local(server).generate_content(text_request(), stream=True))

    assert [r.get_text() for r in responses if r.partial] == ["Let me ", "check."]
    final = responses[-1]
    assert final.partial is False and final.get_text() == "Let me check."
    call = final.content.parts[-1].function_call  # type: ignore[union-attr,index]
    assert call is not None
    assert (call.id, call.name, call.args) == ("call_1", "get_weather", {"city": "Oslo"})


def test_429_is_retried_after_the_servers_delay(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply(
            {"error": {"message": "Slow down", "type": "rate_limit"}}, 429, {"retry-after": "3"}
        ),
        json_reply(completion({"content": "ok"})),
    )
    llm = local(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [response] = clock.run(llm.generate_content(text_request()))

    assert response.get_text() == "ok"
    [notice] = clock.notices
    assert notice.error.status == 429 and notice.delay == 3.0


def test_a_400_is_a_model_error_that_is_not_retried(server: FakeServer) -> None:
    server.push(json_reply({"error": {"message": "bad request", "type": "invalid"}}, 400))

    with pytest.raises(ModelError) as caught:
        run(local(server, retry=FAST).generate_content(text_request()))

    assert caught.value.status == 400 and not caught.value.retryable
    assert len(server.exchanges) == 1


def test_disposing_during_a_slow_stream_closes_the_http_request(server: FakeServer) -> None:
    server.push(sse_reply([chunk({"content": "slow"})], hang=True))
    got_partial = threading.Event()

    subscription = (
        local(server)
        .generate_content(text_request(), stream=True)
        .subscribe(lambda _: got_partial.set())
    )
    assert got_partial.wait(30)
    subscription.dispose()

    assert server.disconnected.wait(10)
    assert unfinished_tasks() == set()


def test_a_hosted_provider_is_refused_while_real_calls_are_off() -> None:
    with pytest.raises(ConfigurationError, match="real model calls are disabled"):
        run(LiteLlm("anthropic/claude-3-haiku", retry=None).generate_content(text_request()))


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather for a city."""
    return {"city": city, "sky": "sunny"}


def test_a_tool_turn_through_the_runner(server: FakeServer) -> None:
    call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    server.push(
        json_reply(completion({"content": None, "tool_calls": [call]}, "tool_calls")),
        json_reply(completion({"content": "Sunny in Oslo."})),
    )
    agent = LlmAgent(name="weather", model=local(server), tools=[get_weather])
    runner = InMemoryRunner(agent=agent, app_name="litellm")

    events = list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="Weather in Oslo?",
            run_config=RunConfig(auto_create_session=True, streaming_mode=StreamingMode.NONE),
        )
    )

    assert simplify_events(events) == [
        'weather: FunctionCall(get_weather, {"city": "Oslo"})',
        'weather: FunctionResponse(get_weather, {"city": "Oslo", "sky": "sunny"})',
        "weather: Sunny in Oslo.",
    ]
    second = server.exchanges[1].json()["messages"]
    assert second[-2]["tool_calls"][0]["id"] == second[-1]["tool_call_id"] == "call_7"


def test_litellm_provider_prefixes_resolve_to_lite_llm() -> None:
    from adk_rx import LlmRegistry
    from adk_rx.models.openai_compat import OpenAiCompatibleLlm

    model = LlmRegistry.resolve("ollama_chat/llama3.2")

    assert isinstance(model, LiteLlm) and model.model == "ollama_chat/llama3.2"
    assert isinstance(LlmRegistry.resolve("openai/gpt-4o-mini"), OpenAiCompatibleLlm)
