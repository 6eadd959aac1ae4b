"""Grounding, citations, log probabilities and model version travel from the provider's
answer to the stored event, streamed and not, on every session store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from adk_rx import Event, InMemorySessionService, LlmAgent, Runner, SqlSessionService
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from adk_rx.models.response_metadata import grounding_sources
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.sessions.base import BaseSessionService
from tests.sessions.postgres import postgres_url

from ._fakes import FakeServer, json_reply, sse_reply

__all__ = ["postgres_url"]

GROUNDING = {
    "webSearchQueries": ["order 1234 status"],
    "groundingChunks": [
        {"web": {"uri": "https://example.com/orders", "title": "Orders help"}},
        {"web": {"uri": "https://example.com/ship", "title": "Shipping"}},
    ],
}
CITATIONS = {
    "citationSources": [{"uri": "https://example.com/orders", "startIndex": 0, "endIndex": 7}]
}
LOGPROBS = {
    "chosenCandidates": [{"token": "Ship", "logProbability": -0.25}],
    "topCandidates": [{"candidates": [{"token": "Ship", "logProbability": -0.25}]}],
}


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseSessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    service = SqlSessionService(url)
    try:
        yield service
    finally:
        service.close()


def _gemini_candidate(text: str, *, finish: str | None = "STOP", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, **extra}
    if finish:
        body["finishReason"] = finish
    return body


def _run_and_reload(
    store: BaseSessionService, llm: Any, streaming: bool
) -> tuple[Event, Event, list[Event]]:
    runner = Runner(app_name="meta", agent=LlmAgent(name="desk", model=llm), session_service=store)
    session = store.create_session(app_name="meta", user_id="u").run()
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE
    emitted = list(
        runner.run(
            user_id="u",
            session_id=session.id,
            new_message="Where is order 1234?",
            run_config=RunConfig(streaming_mode=mode),
        )
    )
    stored = store.get_session(app_name="meta", user_id="u", session_id=session.id).run()
    assert stored is not None
    final = emitted[-1]
    return final, stored.events[-1], emitted


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
def test_gemini_grounding_citations_and_logprobs_reach_the_stored_event(
    server: FakeServer, store: BaseSessionService, streaming: bool
) -> None:
    if streaming:
        server.push(
            sse_reply(
                [
                    {
                        "candidates": [
                            _gemini_candidate(
                                "Ship",
                                finish=None,
                                logprobsResult=LOGPROBS,
                                citationMetadata=CITATIONS,
                            )
                        ],
                        "modelVersion": "gemini-test-002",
                    },
                    {
                        "candidates": [
                            _gemini_candidate("ped.", groundingMetadata=GROUNDING, avgLogprobs=-0.5)
                        ],
                        "modelVersion": "gemini-test-002",
                    },
                ]
            )
        )
    else:
        server.push(
            json_reply(
                {
                    "candidates": [
                        _gemini_candidate(
                            "Shipped.",
                            groundingMetadata=GROUNDING,
                            citationMetadata=CITATIONS,
                            avgLogprobs=-0.5,
                            logprobsResult=LOGPROBS,
                        )
                    ],
                    "modelVersion": "gemini-test-002",
                }
            )
        )
    llm = GeminiLlm("gemini-test", http_options={"base_url": server.url}, retry=None)

    final, stored, _ = _run_and_reload(store, llm, streaming)

    for event in (final, stored, Event.from_json(stored.to_json())):
        assert event.text() == "Shipped."
        assert event.model_version == "gemini-test-002"
        assert grounding_sources(event.grounding_metadata) == [
            ("Orders help", "https://example.com/orders"),
            ("Shipping", "https://example.com/ship"),
        ]
        assert event.grounding_metadata is not None
        assert event.grounding_metadata.web_search_queries == ["order 1234 status"]
        assert event.citation_metadata is not None and event.citation_metadata.citations
        assert event.citation_metadata.citations[0].uri == "https://example.com/orders"
        assert event.avg_logprobs == -0.5
        assert event.logprobs_result is not None
        assert [c.token for c in event.logprobs_result.chosen_candidates or []] == ["Ship"]


def _openai_logprobs(*tokens: tuple[str, float]) -> dict[str, Any]:
    return {
        "content": [
            {"token": t, "logprob": p, "top_logprobs": [{"token": t, "logprob": p}]}
            for t, p in tokens
        ]
    }


ANNOTATIONS = [
    {
        "type": "url_citation",
        "url_citation": {"url": "https://example.com/orders", "title": "Orders", "start_index": 0},
    }
]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
def test_openai_logprobs_citations_and_model_reach_the_stored_event(
    server: FakeServer, store: BaseSessionService, streaming: bool
) -> None:
    if streaming:
        frames: list[Any] = [
            {
                "model": "llama-test-7b",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": "Ship", "annotations": ANNOTATIONS},
                        "logprobs": _openai_logprobs(("Ship", -0.5)),
                        "finish_reason": None,
                    }
                ],
            },
            {
                "model": "llama-test-7b",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": "ped."},
                        "logprobs": _openai_logprobs(("ped.", -1.5)),
                        "finish_reason": "stop",
                    }
                ],
            },
            "data: [DONE]\n\n",
        ]
        server.push(sse_reply(frames))
    else:
        server.push(
            json_reply(
                {
                    "model": "llama-test-7b",
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": "Shipped.",
                                "annotations": ANNOTATIONS,
                            },
                            "logprobs": _openai_logprobs(("Ship", -0.5), ("ped.", -1.5)),
                            "finish_reason": "stop",
                        }
                    ],
                }
            )
        )
    llm = OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", retry=None)

    final, stored, _ = _run_and_reload(store, llm, streaming)

    for event in (final, stored, Event.from_json(stored.to_json())):
        assert event.text() == "Shipped."
        assert event.model_version == "llama-test-7b"
        assert event.avg_logprobs == pytest.approx(-1.0)
        assert event.logprobs_result is not None
        assert [c.token for c in event.logprobs_result.chosen_candidates or []] == ["Ship", "ped."]
        assert event.citation_metadata is not None
        [citation] = event.citation_metadata.citations or []
        assert (citation.uri, citation.title, citation.start_index) == (
            "https://example.com/orders",
            "Orders",
            0,
        )


def test_grounding_sources_skip_chunks_without_a_uri_and_repeats() -> None:
    metadata = types.GroundingMetadata(
        grounding_chunks=[
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://a.example", title="A")),
            types.GroundingChunk(web=types.GroundingChunkWeb(title="no uri")),
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://a.example", title="A")),
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://b.example")),
        ]
    )

    assert grounding_sources(metadata) == [
        ("A", "https://a.example"),
        ("https://b.example", "https://b.example"),
    ]
    assert grounding_sources(None) == []
