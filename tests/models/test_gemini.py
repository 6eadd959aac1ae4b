"""GeminiLlm with the real google-genai client against a scripted Gemini REST server."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex.operators as ops
from google import genai
from google.genai import types

from adk_rx.errors import ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import RetryPolicy

from ._fakes import FakeServer, VirtualClock, json_reply, raw_reply, sse_reply, unfinished_tasks

FAST = RetryPolicy(max_attempts=3, initial_delay=0.5, multiplier=2.0, jitter=0.0)


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def gemini(server: FakeServer, **options: Any) -> GeminiLlm:
    options.setdefault("retry", None)
    return GeminiLlm("gemini-test", http_options={"base_url": server.url}, **options)


def text_request(text: str = "hello") -> LlmRequest:
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    request.append_instructions(["You are terse."])
    return request


def candidate(*parts: dict[str, Any], finish: str | None = "STOP") -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        body["finishReason"] = finish
    return body


USAGE = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}


def run(observable: Any) -> list[LlmResponse]:
    return observable.pipe(ops.to_list()).run()


def test_text_turn_sends_contents_system_instruction_tools_and_config(server: FakeServer) -> None:
    server.push(
        json_reply(
            {
                "candidates": [candidate({"text": "Hi there"})],
                "usageMetadata": USAGE,
                "modelVersion": "gemini-test-001",
            }
        )
    )
    request = text_request()
    request.config.temperature = 0.25
    request.config.tools = [
        types.Tool(
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
    ]

    [response] = run(gemini(server).generate_content(request))

    assert response.get_text() == "Hi there"
    assert response.partial is None and response.error_code is None
    assert response.finish_reason == "STOP"
    assert response.usage_metadata is not None and response.usage_metadata.total_token_count == 7
    assert response.model_version == "gemini-test-001"
    [exchange] = server.exchanges
    assert exchange.path.endswith("/models/gemini-test:generateContent")
    assert exchange.headers["x-goog-api-key"] == "test-key"
    body = exchange.json()
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert body["generationConfig"]["temperature"] == 0.25
    [declaration] = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["parameters"]["required"] == ["city"]


def test_streaming_emits_partials_then_one_aggregate(server: FakeServer) -> None:
    server.push(
        sse_reply(
            [
                {"candidates": [candidate({"text": "Hel"}, finish=None)]},
                {"candidates": [candidate({"text": "lo, "}, finish=None)]},
                {
                    "candidates": [candidate({"text": "world"}, {"functionCall": {"name": "f"}})],
                    "usageMetadata": USAGE,
                },
            ]
        )
    )

    responses = run(gemini(server).generate_content(text_request(), stream=True))

    assert [r.partial for r in responses] == [True, True, True, False]
    assert [r.get_text() for r in responses] == ["Hel", "lo, ", "world", "Hello, world"]
    final = responses[-1]
    assert final.content is not None and final.content.parts is not None
    call = final.content.parts[1].function_call
    assert call is not None and call.name == "f" and call.id and call.id.startswith("adk-")
    partial_parts = responses[2].content.parts  # type: ignore[union-attr]
    assert partial_parts is not None and partial_parts[1].function_call is not None
    assert partial_parts[1].function_call.id == call.id  # partial and final share the id
    assert final.usage_metadata is not None and final.usage_metadata.prompt_token_count == 5
    assert final.finish_reason == "STOP" and final.turn_complete is True
    assert server.exchanges[0].query == "alt=sse"


def test_tool_call_round_trip_keeps_ids_on_our_side_only(server: FakeServer) -> None:
    server.push(
        json_reply(
            {
                "candidates": [
                    candidate({"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}})
                ]
            }
        ),
        json_reply({"candidates": [candidate({"text": "It is sunny in Oslo."})]}),
    )
    llm = gemini(server)
    request = text_request("weather in Oslo?")

    [first] = run(llm.generate_content(request))
    assert first.content is not None and first.content.parts is not None
    call = first.content.parts[0].function_call
    assert call is not None and call.args == {"city": "Oslo"} and call.id

    request.contents.append(first.content)
    request.contents.append(
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name="get_weather", response={"sky": "sunny"}
                    )
                )
            ],
        )
    )
    [second] = run(llm.generate_content(request))

    assert second.get_text() == "It is sunny in Oslo."
    sent = server.exchanges[1].json()["contents"]
    assert sent[1]["parts"][0]["functionCall"] == {"name": "get_weather", "args": {"city": "Oslo"}}
    assert sent[2]["parts"][0]["functionResponse"] == {
        "name": "get_weather",
        "response": {"sky": "sunny"},
    }
    # The request object itself was not edited: our ids are still on it.
    assert request.contents[1].parts[0].function_call.id == call.id  # type: ignore[index,union-attr]


def test_safety_finish_is_an_error_response_not_an_exception(server: FakeServer) -> None:
    server.push(json_reply({"candidates": [{"finishReason": "SAFETY"}]}))

    [response] = run(gemini(server).generate_content(text_request()))

    assert response.error_code == "SAFETY"
    assert response.error_message == "the model stopped early: SAFETY"
    assert response.content is None


def test_no_candidates_reports_the_prompt_block_reason(server: FakeServer) -> None:
    server.push(
        json_reply({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
        sse_reply([{"promptFeedback": {"blockReason": "SAFETY"}}]),
    )
    llm = gemini(server)

    [plain] = run(llm.generate_content(text_request()))
    streamed = run(llm.generate_content(text_request(), stream=True))

    assert plain.error_code == "PROHIBITED_CONTENT"
    assert [(r.partial, r.error_code) for r in streamed] == [(False, "SAFETY")]


def test_max_tokens_keeps_the_text_and_reports_the_finish(server: FakeServer) -> None:
    server.push(json_reply({"candidates": [candidate({"text": "Once upon"}, finish="MAX_TOKENS")]}))

    [response] = run(gemini(server).generate_content(text_request()))

    assert response.get_text() == "Once upon"
    assert response.error_code == "MAX_TOKENS"
    assert response.finish_reason == "MAX_TOKENS"


def test_429_with_retry_after_waits_that_long_then_succeeds(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply(
            {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}},
            429,
            {"retry-after": "7"},
        ),
        json_reply({"candidates": [candidate({"text": "ok"})]}),
    )
    llm = gemini(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [response] = clock.run(llm.generate_content(text_request()))

    assert response.get_text() == "ok"
    [notice] = clock.notices
    assert notice.delay == 7.0  # the server's Retry-After, not the 0.5s backoff
    assert notice.error.status == 429 and "Quota exceeded" in str(notice.error)
    assert clock.now == 7.0
    assert len(server.exchanges) == 2


def test_500_on_every_attempt_gives_up_after_the_bounded_retries(server: FakeServer) -> None:
    clock = VirtualClock()
    failure = json_reply({"error": {"code": 500, "message": "Internal", "status": "INTERNAL"}}, 500)
    server.push(failure, failure, failure, failure)
    llm = gemini(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    with pytest.raises(ModelError) as caught:
        clock.run(llm.generate_content(text_request()))

    assert caught.value.status == 500
    assert "gave up after 3 attempt(s)" in str(caught.value) and "Internal" in str(caught.value)
    assert [n.delay for n in clock.notices] == [0.5, 1.0]
    assert len(server.exchanges) == 3


def test_a_stream_cut_after_a_partial_errors_without_retrying(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(sse_reply([{"candidates": [candidate({"text": "Hal"}, finish=None)]}], cut=True))
    llm = gemini(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)
    seen: list[LlmResponse] = []

    with pytest.raises(ModelError) as caught:
        clock.run(
            llm.generate_content(text_request(), stream=True).pipe(ops.do_action(seen.append))
        )

    assert [r.get_text() for r in seen] == ["Hal"]
    assert caught.value.retryable and clock.notices == []
    assert len(server.exchanges) == 1


def test_malformed_json_is_a_typed_error_and_not_retried(server: FakeServer) -> None:
    server.push(raw_reply('{"candidates": [', 200, {"content-type": "application/json"}))

    with pytest.raises(ModelError) as caught:
        run(gemini(server, retry=FAST).generate_content(text_request()))

    assert caught.value.status == "invalid_response" and not caught.value.retryable
    assert len(server.exchanges) == 1


def test_disposing_during_a_slow_stream_closes_the_http_request(server: FakeServer) -> None:
    server.push(sse_reply([{"candidates": [candidate({"text": "slow"}, finish=None)]}], hang=True))
    got_partial = threading.Event()

    subscription = (
        gemini(server)
        .generate_content(text_request(), stream=True)
        .subscribe(lambda _: got_partial.set())
    )
    assert got_partial.wait(10)
    subscription.dispose()

    assert server.disconnected.wait(10)
    assert unfinished_tasks() == set()


def test_missing_api_key_names_both_variables_at_call_time(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY")
    llm = gemini(server)  # constructing is fine

    with pytest.raises(MissingCredentialsError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        run(llm.generate_content(text_request()))
    assert server.exchanges == []


def test_gemini_api_key_is_used_when_google_api_key_is_unset(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.setenv("GEMINI_API_KEY", "other-key")
    server.push(json_reply({"candidates": [candidate({"text": "ok"})]}))

    run(gemini(server).generate_content(text_request()))

    assert server.exchanges[0].headers["x-goog-api-key"] == "other-key"


def test_the_default_endpoint_is_refused_while_real_calls_are_off() -> None:
    llm = GeminiLlm("gemini-2.5-flash", retry=None)

    with pytest.raises(ConfigurationError, match="real model calls are disabled"):
        run(llm.generate_content(text_request()))


def test_a_ready_client_is_used_as_is(server: FakeServer) -> None:
    server.push(json_reply({"candidates": [candidate({"text": "ok"})]}))
    client = genai.Client(api_key="client-key", http_options={"base_url": server.url})

    [response] = run(
        GeminiLlm("gemini-test", client=client, retry=None).generate_content(text_request())
    )

    assert response.get_text() == "ok"
    assert server.exchanges[0].headers["x-goog-api-key"] == "client-key"


def test_a_ready_client_for_the_real_service_is_refused() -> None:
    client = genai.Client(api_key="client-key")

    with pytest.raises(ConfigurationError, match=r"generativelanguage\.googleapis\.com"):
        run(GeminiLlm("gemini-test", client=client, retry=None).generate_content(text_request()))


def fragment(**call: Any) -> dict[str, Any]:
    return {"candidates": [candidate({"functionCall": call}, finish=None)]}


def test_streamed_function_call_arguments_are_reassembled(server: FakeServer) -> None:
    server.push(
        sse_reply(
            [
                {"candidates": [candidate({"text": "Booking."}, finish=None)]},
                {
                    "candidates": [
                        candidate(
                            {
                                "functionCall": {"name": "book", "willContinue": True},
                                "thoughtSignature": "c2lnLWJvb2s=",
                            },
                            finish=None,
                        )
                    ]
                },
                fragment(
                    partialArgs=[
                        {"jsonPath": "$.city", "stringValue": "Os", "willContinue": True},
                        {"jsonPath": "$.nights", "numberValue": 2},
                    ],
                    willContinue=True,
                ),
                fragment(
                    partialArgs=[
                        {"jsonPath": "$.city", "stringValue": "lo"},
                        {"jsonPath": "$.guests[1].name", "stringValue": "Ann"},
                        {"jsonPath": "$['late checkout']", "boolValue": True},
                    ],
                    willContinue=True,
                ),
                fragment(),  # the closing piece: will_continue false, dropped by proto3 JSON
                fragment(name="notify", args={"who": "desk"}),
                {"candidates": [candidate()], "usageMetadata": USAGE},
            ]
        ),
        json_reply({"candidates": [candidate({"text": "Booked."})]}),
    )
    llm = gemini(server)
    request = text_request("Book Oslo")

    responses = run(llm.generate_content(request, stream=True))

    calls = [
        p.function_call
        for r in responses
        if r.partial
        for p in r.content.parts or []  # type: ignore[union-attr]
        if p.function_call
    ]
    assert [c.name for c in calls] == ["book", "notify"]  # each call once, whole
    final = responses[-1]
    assert final.content is not None and final.content.parts is not None
    text, book, notify = final.content.parts
    assert text.text == "Booking."
    assert book.function_call is not None and book.function_call.args == {
        "city": "Oslo",
        "nights": 2,
        "guests": [None, {"name": "Ann"}],
        "late checkout": True,
    }
    assert book.function_call.id and book.function_call.id.startswith("adk-")
    assert book.function_call.partial_args is None and book.function_call.will_continue is None
    assert book.thought_signature == b"sig-book"
    assert notify.function_call is not None and notify.function_call.args == {"who": "desk"}

    # The history goes back to the API (which refuses partial_args) with the signature.
    request.contents.append(final.content)
    run(llm.generate_content(request))
    sent = server.exchanges[1].json()["contents"][1]["parts"]
    assert sent[1] == {
        "functionCall": {"name": "book", "args": book.function_call.args},
        "thoughtSignature": "c2lnLWJvb2s=",
    }


def test_a_streamed_call_without_a_closing_piece_is_kept(server: FakeServer) -> None:
    server.push(
        sse_reply(
            [
                fragment(name="f", willContinue=True),
                fragment(partialArgs=[{"jsonPath": "$.x", "numberValue": 1}], willContinue=True),
                {"candidates": [candidate()]},
            ]
        )
    )

    final = run(gemini(server).generate_content(text_request(), stream=True))[-1]

    [part] = final.content.parts  # type: ignore[union-attr,misc]
    assert part.function_call is not None and part.function_call.args == {"x": 1}
