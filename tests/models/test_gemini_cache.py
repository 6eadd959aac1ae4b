"""GeminiLlm's context cache against a local Gemini protocol server, in virtual time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import reactivex.operators as ops
from google.genai import types
from reactivex.testing import TestScheduler

from adk_rx.models.context_cache import ContextCacheConfig
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse

from ._fakes import serving
from ._gemini_server import GeminiProtocolServer

STATIC = "You answer questions about the handbook. " * 40  # ~400 tokens
CACHE = ContextCacheConfig(cache_intervals=3, ttl_seconds=600, min_tokens=0)


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")


@pytest.fixture
def gemini_server() -> Iterator[GeminiProtocolServer]:
    with serving(GeminiProtocolServer()) as server:
        yield server


class Conversation:
    """A conversation held by hand: each ``ask`` sends the whole history, like the flow."""

    def __init__(self, llm: GeminiLlm, cache: ContextCacheConfig | None = CACHE) -> None:
        self.llm = llm
        self.cache = cache
        self.instruction = STATIC
        self.tools: list[types.Tool] = []
        self.contents: list[types.Content] = []

    def ask(self, text: str, stream: bool = False) -> LlmResponse:
        self.contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
        request = LlmRequest(model=self.llm.model, contents=list(self.contents))
        request.append_instructions([self.instruction])
        request.config.tools = list(self.tools) or None
        request.cache_config = self.cache
        responses: list[LlmResponse] = (
            self.llm.generate_content(request, stream=stream).pipe(ops.to_list()).run()
        )
        final = responses[-1]
        assert final.content is not None and final.error_code is None
        self.contents.append(final.content)
        return final


def gemini(
    server: GeminiProtocolServer, clock: TestScheduler, model: str = "gemini-test"
) -> GeminiLlm:
    return GeminiLlm(model, http_options={"base_url": server.url}, retry=None, scheduler=clock)


def sent(server: GeminiProtocolServer, index: int = -1) -> dict[str, Any]:
    return server.generate_requests()[index].json()


def test_the_first_request_creates_the_cache_and_later_ones_reuse_it(
    gemini_server: GeminiProtocolServer,
) -> None:
    talk = Conversation(gemini(gemini_server, TestScheduler()))

    first = talk.ask("Q1")
    talk.ask("Q2")
    third = talk.ask("Q3", stream=True)

    assert gemini_server.caches_created == 1 and gemini_server.cache_hits == 3
    [create] = [r.json() for r in gemini_server.requests if r.path.endswith("cachedContents")]
    assert create["systemInstruction"]["parts"][0]["text"] == STATIC
    assert create["ttl"] == "600s" and create["model"] == "models/gemini-test"
    assert "contents" not in create  # the first request's stable prefix is the instruction
    body = sent(gemini_server)
    assert body["cachedContent"] == "cachedContents/c1"
    assert "systemInstruction" not in body and "tools" not in body
    assert [c["parts"][0]["text"] for c in body["contents"]] == [
        "Q1", "Answer 1.", "Q2", "Answer 2.", "Q3",
    ]  # fmt: skip
    for response in (first, third):
        usage = response.usage_metadata
        assert usage is not None and usage.cached_content_token_count == len(STATIC) // 4


def test_after_cache_intervals_uses_a_longer_prefix_is_cached_and_the_old_one_deleted(
    gemini_server: GeminiProtocolServer,
) -> None:
    talk = Conversation(gemini(gemini_server, TestScheduler()))

    for turn in range(1, 5):
        talk.ask(f"Q{turn}")

    assert gemini_server.caches_created == 2 and gemini_server.caches_deleted == 1
    create = [r.json() for r in gemini_server.requests if r.path.endswith("cachedContents")][1]
    assert [c["parts"][0]["text"] for c in create["contents"]] == [
        "Q1", "Answer 1.", "Q2", "Answer 2.", "Q3", "Answer 3.",
    ]  # fmt: skip
    body = sent(gemini_server)
    assert body["cachedContent"] == "cachedContents/c2"
    assert [c["parts"][0]["text"] for c in body["contents"]] == ["Q4"]
    assert gemini_server.cache_hits == 4


def test_an_expired_cache_is_replaced_in_virtual_time(gemini_server: GeminiProtocolServer) -> None:
    clock = TestScheduler()
    talk = Conversation(gemini(gemini_server, clock))

    talk.ask("Q1")
    clock.advance_by(500.0)  # within 600 s, less the margin
    talk.ask("Q2")
    clock.advance_by(100.0)
    talk.ask("Q3")

    assert gemini_server.caches_created == 2
    assert [r.json()["cachedContent"] for r in gemini_server.generate_requests()] == [
        "cachedContents/c1",
        "cachedContents/c1",
        "cachedContents/c2",
    ]


def test_a_changed_instruction_or_tool_list_makes_a_new_cache(
    gemini_server: GeminiProtocolServer,
) -> None:
    talk = Conversation(gemini(gemini_server, TestScheduler()))

    talk.ask("Q1")
    talk.instruction = STATIC + " Be brief."
    talk.ask("Q2")
    talk.tools = [types.Tool(function_declarations=[types.FunctionDeclaration(name="lookup")])]
    talk.ask("Q3")
    talk.ask("Q4")

    names = [r.json()["cachedContent"] for r in gemini_server.generate_requests()]
    assert names == [
        "cachedContents/c1",
        "cachedContents/c2",
        "cachedContents/c3",
        "cachedContents/c3",
    ]
    creates = [r.json() for r in gemini_server.requests if r.path.endswith("cachedContents")]
    assert creates[1]["systemInstruction"]["parts"][0]["text"].endswith("Be brief.")
    assert creates[2]["tools"][0]["functionDeclarations"][0]["name"] == "lookup"


def test_a_cache_the_server_lost_falls_back_to_the_whole_request(
    gemini_server: GeminiProtocolServer,
) -> None:
    talk = Conversation(gemini(gemini_server, TestScheduler()))

    talk.ask("Q1")
    gemini_server.drop("cachedContents/c1")
    talk.ask("Q2")  # refused (403), then sent whole
    talk.ask("Q3")

    bodies = [r.json() for r in gemini_server.generate_requests()]
    assert [b.get("cachedContent") for b in bodies] == [
        "cachedContents/c1",
        "cachedContents/c1",
        None,
        "cachedContents/c2",
    ]
    assert bodies[2]["systemInstruction"]["parts"][0]["text"] == STATIC


def test_a_prefix_below_the_minimum_is_sent_whole(gemini_server: GeminiProtocolServer) -> None:
    small = Conversation(
        gemini(gemini_server, TestScheduler()),
        ContextCacheConfig(min_tokens=10_000),
    )
    named = Conversation(gemini(gemini_server, TestScheduler(), model="gemini-2.5-flash"))

    small.ask("Q1")
    named.ask("Q1")  # ~400 tokens, under Gemini 2.5's 2048

    assert gemini_server.caches_created == 0
    assert all("cachedContent" not in r.json() for r in gemini_server.generate_requests())


def test_without_a_cache_config_nothing_is_cached(gemini_server: GeminiProtocolServer) -> None:
    talk = Conversation(gemini(gemini_server, TestScheduler()), cache=None)

    talk.ask("Q1")
    talk.ask("Q2")

    assert gemini_server.caches_created == 0
    assert sent(gemini_server)["systemInstruction"]["parts"][0]["text"] == STATIC
