"""The embedders: hashing offline, and the Gemini and OpenAI protocols against a local server
(batches, retries, errors, cancellation)."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.memory import Embedder, GeminiEmbedder, HashingEmbedder, OpenAiEmbedder
from adk_rx.models.resilience import RetryPolicy
from tests.models._fakes import (
    Exchange,
    FakeServer,
    Receive,
    Send,
    VirtualClock,
    json_reply,
    unfinished_tasks,
)

FAST = RetryPolicy(max_attempts=3, initial_delay=0.5, multiplier=2.0, jitter=0.0)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _openai_answer(*vectors: list[float], shuffled: bool = False) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "data": data[::-1] if shuffled else data, "model": "m"}


def _openai(server: FakeServer, **options: Any) -> OpenAiEmbedder:
    options.setdefault("retry", None)
    options.setdefault("dimension", 3)
    return OpenAiEmbedder("nomic-embed-text", base_url=f"{server.url}/v1", **options)


def _hang_until_disconnect() -> Any:
    async def reply(server: FakeServer, _: Exchange, receive: Receive, __: Send) -> None:
        server.first_chunk_sent.set()
        while (await receive())["type"] != "http.disconnect":
            pass
        server.disconnected.set()

    return reply


# -- HashingEmbedder --------------------------------------------------------------------------


def test_hashing_vectors_are_deterministic_unit_length_and_word_based() -> None:
    first, second = HashingEmbedder(), HashingEmbedder()
    [a, b, c] = first.embed(["My dog's NAMES", "the dog name", "a train at noon"]).run()

    assert second.embed(["My dog's NAMES"]).run() == [a]
    assert len(a) == 256 and math.isclose(_dot(a, a), 1.0)
    assert _dot(a, b) > 0.99  # case, punctuation, a plural and stopwords do not matter
    assert abs(_dot(a, c)) < 0.3
    assert HashingEmbedder(dim=512).name == "hashing-512" and isinstance(first, Embedder)


def test_a_text_of_stopwords_only_is_the_zero_vector() -> None:
    assert HashingEmbedder(dim=64).vector("what is it?") == [0.0] * 64


@pytest.mark.parametrize("dim", [0, 60, 100, True, "256"])
def test_a_bad_dimension_is_refused(dim: Any) -> None:
    with pytest.raises(ConfigurationError, match="multiple of 8"):
        HashingEmbedder(dim=dim)


# -- OpenAiEmbedder ---------------------------------------------------------------------------


def test_openai_texts_go_in_batches_and_come_back_in_order_as_unit_vectors(
    server: FakeServer,
) -> None:
    server.push(
        json_reply(_openai_answer([3.0, 0.0, 4.0], [0.0, 2.0, 0.0], shuffled=True)),
        json_reply(_openai_answer([1.0, 1.0, 0.0])),
    )

    vectors = _openai(server, batch_size=2).embed(["a", "b", "c"]).run()

    assert vectors[0] == pytest.approx([0.6, 0.0, 0.8])
    assert vectors[1] == pytest.approx([0.0, 1.0, 0.0])
    assert vectors[2] == pytest.approx([math.sqrt(0.5), math.sqrt(0.5), 0.0])
    first, second = server.exchanges
    assert first.path == "/v1/embeddings" and "authorization" not in first.headers
    assert first.json() == {
        "model": "nomic-embed-text",
        "input": ["a", "b"],
        "encoding_format": "float",
    }
    assert second.json()["input"] == ["c"]


def test_openai_asks_text_embedding_3_for_shorter_vectors(server: FakeServer) -> None:
    server.push(json_reply(_openai_answer([1.0] * 256)))
    embedder = OpenAiEmbedder(
        "text-embedding-3-small", base_url=server.url, api_key="sk-local", dimension=256, retry=None
    )

    embedder.embed(["x"]).run()

    assert server.exchanges[0].json()["dimensions"] == 256
    assert server.exchanges[0].headers["authorization"] == "Bearer sk-local"
    assert embedder.name == "openai/text-embedding-3-small@256"
    assert OpenAiEmbedder().dimension == 1536


def test_openai_429_is_retried_after_the_time_asked(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply({"error": {"message": "slow down"}}, 429, {"retry-after": "3"}),
        json_reply(_openai_answer([1.0, 0.0, 0.0])),
    )
    embedder = _openai(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [vectors] = clock.run(embedder.embed(["a"]))  # type: ignore[arg-type]

    assert vectors == [[1.0, 0.0, 0.0]] and clock.now == 3.0 and len(server.exchanges) == 2


def test_openai_400_fails_at_once_with_the_servers_message(server: FakeServer) -> None:
    server.push(json_reply({"error": {"message": "input too long"}}, 400))

    with pytest.raises(ModelError, match="HTTP 400: input too long"):
        _openai(server, retry=FAST).embed(["a"]).run()
    assert len(server.exchanges) == 1


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (_openai_answer([1.0, 0.0]), "a vector of 2 numbers; the embedder is set up for 3"),
        (_openai_answer(), "returned 0 embeddings for 1 texts"),
        ({"nothing": []}, "not an embeddings list"),
    ],
)
def test_openai_answers_that_do_not_fit_fail_clearly(
    server: FakeServer, answer: Any, error: str
) -> None:
    server.push(json_reply(answer))

    with pytest.raises(ModelError, match=error):
        _openai(server).embed(["a"]).run()


def test_openai_needs_a_dimension_for_an_unknown_model_and_a_key_for_openai() -> None:
    with pytest.raises(ConfigurationError, match="pass dimension="):
        OpenAiEmbedder("nomic-embed-text")
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        OpenAiEmbedder(retry=None).embed(["a"]).run()


def test_disposing_cancels_the_request_in_flight(server: FakeServer) -> None:
    server.push(_hang_until_disconnect())
    done = threading.Event()

    subscription = (
        _openai(server)
        .embed(["a"])
        .subscribe(on_next=lambda _: done.set(), on_error=lambda _: done.set())
    )
    assert server.first_chunk_sent.wait(10)
    subscription.dispose()

    assert server.disconnected.wait(10)
    assert not done.is_set() and unfinished_tasks() == set()


def test_no_request_is_sent_for_no_texts(server: FakeServer) -> None:
    assert _openai(server).embed([]).run() == []
    assert server.exchanges == []


# -- GeminiEmbedder ---------------------------------------------------------------------------


def _gemini(server: FakeServer, **options: Any) -> GeminiEmbedder:
    options.setdefault("retry", None)
    return GeminiEmbedder(
        dimension=2, api_key="test-key", http_options={"base_url": server.url}, **options
    )


def test_gemini_sends_a_batch_with_task_type_and_dimension(server: FakeServer) -> None:
    server.push(json_reply({"embeddings": [{"values": [3.0, 4.0]}, {"values": [0.0, 5.0]}]}))

    vectors = _gemini(server).embed(["doc one", "doc two"]).run()

    assert vectors == [pytest.approx([0.6, 0.8]), pytest.approx([0.0, 1.0])]
    [exchange] = server.exchanges
    assert exchange.path.endswith("/models/gemini-embedding-001:batchEmbedContents")
    requests = exchange.json()["requests"]
    assert [r["content"]["parts"][0]["text"] for r in requests] == ["doc one", "doc two"]
    assert {r["taskType"] for r in requests} == {"RETRIEVAL_DOCUMENT"}
    assert {r["outputDimensionality"] for r in requests} == {2}


def test_gemini_embeds_queries_as_queries_and_retries_a_503(server: FakeServer) -> None:
    clock = VirtualClock()
    server.push(
        json_reply({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}, 503),
        json_reply({"embeddings": [{"values": [1.0, 0.0]}]}),
    )
    embedder = _gemini(server, retry=FAST, scheduler=clock.scheduler, on_retry=clock.on_retry)

    [vectors] = clock.run(embedder.embed(["where is it?"], is_query=True))  # type: ignore[arg-type]

    assert vectors == [[1.0, 0.0]] and [n.delay for n in clock.notices] == [0.5]
    assert server.exchanges[1].json()["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


def test_gemini_without_a_key_fails_the_call_not_the_constructor() -> None:
    embedder = GeminiEmbedder(retry=None)
    with pytest.raises(MissingCredentialsError, match="GOOGLE_API_KEY"):
        embedder.embed(["a"]).pipe(ops.to_list()).run()
