"""OpenAiCompatibleLlm with its real httpx client against a scripted chat-completions server."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex.operators as ops
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, RunConfig, StreamingMode
from adk_rx.errors import ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from adk_rx.models.resilience import RetryPolicy
from adk_rx.testing import simplify_events

from ._fakes import FakeServer, VirtualClock, json_reply, raw_reply, sse_reply, unfinished_tasks

FAST = RetryPolicy(max_attempts=3, initial_delay=0.5, multiplier=2.0, jitter=0.0)


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def local(server: FakeServer, **options: Any) -> OpenAiCompatibleLlm:
    options.setdefault("retry", None)
    return OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", **options)


def text_request(text: str = "hello") -> LlmRequest:
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    request.append_instructions(["You are terse."])
    return request


def completion(message: dict[str, Any], finish: str = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "llama-test",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        **extra,
    }


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "model": "llama-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


USAGE = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}

WEATHER_TOOL = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="Weather for a city",
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={"city": types.Schema(type=types.Type.STRING)},
                required=["city"],
            ),
        ),
        types.FunctionDeclaration(
            name="get_time",
            parameters_json_schema={"type": "object", "properties": {"tz": {"type": "string"}}},
        ),
    ]
)


def run(observable: Any) -> list[LlmResponse]:
    return observable.pipe(ops.to_list()).run()


def test_text_turn_maps_messages_config_and_usage(server: FakeServer) -> None:
    server.push(json_reply(completion({"content": "Hi there"}, usage=USAGE)))
    request = text_request()
    request.config.temperature = 0.5
    request.config.max_output_tokens = 64

    [response] = run(local(server).generate_content(request))

    assert response.get_text() == "Hi there"
    assert response.finish_reason == "STOP" and response.error_code is None
    assert response.usage_metadata is not None
    assert (
        response.usage_metadata.prompt_token_count,
        response.usage_metadata.total_token_count,
    ) == (9, 12)
    [exchange] = server.exchanges
    assert exchange.path == "/v1/chat/completions"
    assert "authorization" not in exchange.headers  # a local server needs no key
    body = exchange.json()
    assert body["model"] == "llama-test"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hello"},
    ]
    assert (body["temperature"], body["max_tokens"]) == (0.5, 64)
    assert "stream" not in body and "tools" not in body


def test_tool_call_round_trip_with_ids(server: FakeServer) -> None:
    server.push(
        json_reply(
            completion(
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_42",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
                finish="tool_calls",
            )
        ),
        json_reply(completion({"content": "Sunny in Oslo."})),
    )
    llm = local(server, api_key="sk-local")
    request = text_request("weather in Oslo?")
    request.config.tools = [WEATHER_TOOL]

    [first] = run(llm.generate_content(request))
    assert first.content is not None and first.content.parts is not None
    call = first.content.parts[0].function_call
    assert call is not None
    assert (call.id, call.name, call.args) == ("call_42", "get_weather", {"city": "Oslo"})
    assert first.finish_reason == "STOP"

    request.contents.append(first.content)
    request.contents.append(
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call_42", name="get_weather", response={"sky": "sunny"}
                    )
                )
            ],
        )
    )
    [second] = run(llm.generate_content(request))

    assert second.get_text() == "Sunny in Oslo."
    first_body, second_body = (e.json() for e in server.exchanges)
    assert server.exchanges[0].headers["authorization"] == "Bearer sk-local"
    weather, time_tool = first_body["tools"]
    assert weather == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    assert time_tool["function"]["parameters"]["properties"] == {"tz": {"type": "string"}}
    assert second_body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_42",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_42", "content": '{"sky": "sunny"}'},
    ]


def test_history_without_call_ids_pairs_calls_and_responses_by_name(server: FakeServer) -> None:
    server.push(json_reply(completion({"content": "done"})))
    request = text_request()
    request.contents += [
        types.Content(role="model", parts=[types.Part.from_function_call(name="f", args={})]),
        types.Content(
            role="user", parts=[types.Part.from_function_response(name="f", response={})]
        ),
    ]

    run(local(server).generate_content(request))

    assistant, tool = server.exchanges[0].json()["messages"][2:]
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"]


def test_streaming_text_and_tool_call_fragments_are_reassembled(server: FakeServer) -> None:
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
                                "function": {"name": "get_weather", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_2",
                                "function": {"name": "get_time", "arguments": "{}"},
                            }
                        ]
                    },
                    finish="tool_calls",
                ),
                {"object": "chat.completion.chunk", "choices": [], "usage": USAGE},
                "data: [DONE]\n\n",
            ]
        )
    )
    request = text_request()
    request.config.tools = [WEATHER_TOOL]

    responses = run(local(server).generate_content(request, stream=True))

    assert [(r.partial, r.get_text()) for r in responses] == [
        (True, "Let me "),
        (True, "check."),
        (False, "Let me check."),
    ]
    final = responses[-1]
    assert final.content is not None and final.content.parts is not None
    calls = [p.function_call for p in final.content.parts if p.function_call]
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("call_1", "get_weather", {"city": "Oslo"}),
        ("call_2", "get_time", {}),
    ]
    assert final.usage_metadata is not None and final.usage_metadata.total_token_count == 12
    body = server.exchanges[0].json()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_length_finish_is_reported_as_max_tokens(server: FakeServer) -> None:
    server.push(json_reply(completion({"content": "Once upon"}, finish="length")))

    [response] = run(local(server).generate_content(text_request()))

    assert response.get_text() == "Once upon"
    assert (response.finish_reason, response.error_code) == ("MAX_TOKENS", "MAX_TOKENS")


def test_429_with_retry_after_waits_that_long_then_succeeds(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply(
            {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
            429,
            {"retry-after": "3"},
        ),
        json_reply(completion({"content": "ok"})),
    )
    llm = local(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [response] = clock.run(llm.generate_content(text_request()))

    assert response.get_text() == "ok"
    [notice] = clock.notices
    assert (notice.delay, notice.error.status) == (3.0, 429)
    assert "Rate limit reached" in str(notice.error)
    assert clock.now == 3.0 and len(server.exchanges) == 2


def test_429_streamed_before_any_chunk_is_retried(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply({"error": {"message": "slow down"}}, 429),
        sse_reply([chunk({"content": "ok"}, finish="stop"), "data: [DONE]\n\n"]),
    )
    llm = local(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    responses = clock.run(llm.generate_content(text_request(), stream=True))

    assert [r.get_text() for r in responses] == ["ok", "ok"]
    assert [n.delay for n in clock.notices] == [0.5]


def test_500_on_every_attempt_gives_up_after_the_bounded_retries(server: FakeServer) -> None:
    clock = VirtualClock()
    failure = json_reply({"error": {"message": "upstream exploded"}}, 500)
    server.push(failure, failure, failure, failure)
    llm = local(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    with pytest.raises(ModelError) as caught:
        clock.run(llm.generate_content(text_request()))

    assert caught.value.status == 500
    assert "upstream exploded" in str(caught.value) and "3 attempt(s)" in str(caught.value)
    assert [n.delay for n in clock.notices] == [0.5, 1.0] and len(server.exchanges) == 3


def test_a_400_is_not_retried(server: FakeServer) -> None:
    server.push(json_reply({"error": {"message": "bad tool schema"}}, 400))

    with pytest.raises(ModelError, match="HTTP 400: bad tool schema") as caught:
        run(local(server, retry=FAST).generate_content(text_request()))

    assert not caught.value.retryable and len(server.exchanges) == 1


def test_a_stream_cut_after_a_partial_errors_without_retrying(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(sse_reply([chunk({"content": "Hal"})], cut=True))
    llm = local(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)
    seen: list[LlmResponse] = []

    with pytest.raises(ModelError, match="RemoteProtocolError"):
        clock.run(
            llm.generate_content(text_request(), stream=True).pipe(ops.do_action(seen.append))
        )

    assert [r.get_text() for r in seen] == ["Hal"]
    assert clock.notices == [] and len(server.exchanges) == 1


@pytest.mark.parametrize(
    ("reply", "stream", "detail"),
    [
        (raw_reply("{oops", 200, {"content-type": "application/json"}), False, "not JSON"),
        (json_reply({"choices": []}), False, "no choices"),
        (
            json_reply(
                completion(
                    {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{x"}}]}
                )
            ),
            False,
            "arguments that are not JSON",
        ),
        (
            json_reply(completion({"tool_calls": [{"id": "c", "type": "function"}]})),
            False,
            "unknown shape",
        ),
        (sse_reply(["data: {oops\n\n"]), True, "not JSON"),
        (sse_reply([chunk({"tool_calls": "nope"})]), True, "not a list"),
    ],
)
def test_malformed_answers_are_typed_errors(
    server: FakeServer, reply: Any, stream: bool, detail: str
) -> None:
    server.push(reply)

    with pytest.raises(ModelError, match=detail) as caught:
        run(local(server, retry=FAST).generate_content(text_request(), stream=stream))

    assert caught.value.status == "invalid_response" and not caught.value.retryable
    assert len(server.exchanges) == 1


def test_disposing_during_a_slow_stream_closes_the_http_request(server: FakeServer) -> None:
    server.push(sse_reply([chunk({"content": "slow"})], hang=True))
    got_partial = threading.Event()

    subscription = (
        local(server)
        .generate_content(text_request(), stream=True)
        .subscribe(lambda _: got_partial.set())
    )
    assert got_partial.wait(10)
    subscription.dispose()

    assert server.disconnected.wait(10)
    assert unfinished_tasks() == set()


def test_openai_without_a_key_is_a_missing_credentials_error() -> None:
    llm = OpenAiCompatibleLlm("gpt-4o-mini", retry=None)

    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        run(llm.generate_content(text_request()))


def test_base_url_and_key_come_from_the_environment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    server.push(json_reply(completion({"content": "ok"})))

    run(OpenAiCompatibleLlm("m", retry=None).generate_content(text_request()))

    assert server.exchanges[0].path == "/v1/chat/completions"
    assert server.exchanges[0].headers["authorization"] == "Bearer sk-env"


def test_a_remote_server_is_refused_while_real_calls_are_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm = OpenAiCompatibleLlm("gpt-4o-mini", retry=None)

    with pytest.raises(ConfigurationError, match="real model calls are disabled"):
        run(llm.generate_content(text_request()))


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather for a city."""
    return {"city": city, "sky": "sunny"}


@pytest.mark.parametrize("streaming", [False, True])
def test_a_tool_turn_through_the_runner(server: FakeServer, streaming: bool) -> None:
    if streaming:
        server.push(
            sse_reply(
                [
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_7",
                                    "function": {"name": "get_weather", "arguments": '{"city":'},
                                }
                            ]
                        }
                    ),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
                    chunk({}, finish="tool_calls"),
                    "data: [DONE]\n\n",
                ]
            ),
            sse_reply([chunk({"content": "Sunny "}), chunk({"content": "in Oslo."}, "stop")]),
        )
    else:
        call = {
            "id": "call_7",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        }
        server.push(
            json_reply(completion({"content": None, "tool_calls": [call]}, "tool_calls")),
            json_reply(completion({"content": "Sunny in Oslo."})),
        )
    agent = LlmAgent(
        name="weather", model=local(server), instruction="Be brief.", tools=[get_weather]
    )
    runner = InMemoryRunner(agent=agent, app_name="openai")
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE

    events = list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="Weather in Oslo?",
            run_config=RunConfig(auto_create_session=True, streaming_mode=mode),
        )
    )

    assert simplify_events([e for e in events if not e.partial]) == [
        'weather: FunctionCall(get_weather, {"city": "Oslo"})',
        'weather: FunctionResponse(get_weather, {"city": "Oslo", "sky": "sunny"})',
        "weather: Sunny in Oslo.",
    ]
    partial_texts = [simplify_events([e])[0] for e in events if e.partial]
    assert partial_texts == (["weather: Sunny ", "weather: in Oslo."] if streaming else [])
    second = server.exchanges[1].json()["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["tool_calls"][0]["id"] == second[3]["tool_call_id"] == "call_7"
