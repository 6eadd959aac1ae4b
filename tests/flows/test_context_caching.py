"""Context caching through the Runner: the stable prefix cached on Gemini, marked for Claude,
kept identical for OpenAI-compatible servers; each against its local protocol server."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from adk_rx import App, InMemorySessionService, LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.apps import ContextCacheConfig
from adk_rx.models.anthropic_llm import AnthropicLlm
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from adk_rx.usage import summarize_usage
from tests.models._claude import message, text
from tests.models._fakes import json_reply, serving, serving_fake
from tests.models._gemini_server import GeminiProtocolServer

# About 4,000 tokens (four characters a token), the static instruction.
HANDBOOK = "".join(
    f"Rule {n}: refunds for order class {n % 7} are handled by desk {n % 5} within {n % 9 + 1} "
    "days; escalate anything unusual to a supervisor. "
    for n in range(160)
)[:16_000]
CONFIG = ContextCacheConfig(cache_intervals=10, ttl_seconds=1800, min_tokens=0)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")


@pytest.fixture
def gemini_server() -> Iterator[GeminiProtocolServer]:
    with serving(GeminiProtocolServer()) as server:
        yield server


def converse(
    model: Any, turns: int, cache: ContextCacheConfig | None, stream: bool = True, **agent: Any
) -> Runner:
    root = LlmAgent(
        name="desk",
        model=model,
        static_instruction=HANDBOOK,
        instruction="The customer's tier is {tier}.",
        **agent,
    )
    runner = Runner(
        app=App(name="desk", root_agent=root, context_cache_config=cache),
        session_service=InMemorySessionService(),
    )
    mode = StreamingMode.SSE if stream else StreamingMode.NONE
    for n in range(turns):
        events = list(
            runner.run(
                user_id="u",
                session_id="s",
                new_message=f"Question {n + 1}: how long does a refund take?",
                state_delta={"tier": "gold" if n % 2 else "silver"},
                run_config=RunConfig(auto_create_session=True, streaming_mode=mode),
            )
        )
        assert all(e.error_code is None for e in events)
    return runner


def test_twenty_turns_reuse_the_gemini_cache_and_send_far_fewer_bytes(
    gemini_server: GeminiProtocolServer,
) -> None:
    with serving(GeminiProtocolServer()) as uncached_server:
        converse(gemini(uncached_server), 20, None)
    runner = converse(gemini(gemini_server), 20, CONFIG)

    requests = gemini_server.generate_requests()
    assert len(requests) == 20
    assert gemini_server.cache_hits == 20  # the first one too: its cache was made before it
    assert gemini_server.caches_created == 2  # the first turn, then after 10 uses
    assert all("systemInstruction" not in r.json() for r in requests)
    saved = 1 - gemini_server.bytes_sent / uncached_server.bytes_sent
    assert saved >= 0.80, f"request bytes dropped by {saved:.0%} only"
    session = runner.session_service.get_session(app_name="desk", user_id="u", session_id="s")
    usage = summarize_usage(session.run().events).total  # type: ignore[union-attr]
    assert usage.responses == 20 and usage.cached_tokens >= 20 * 4000


def gemini(server: GeminiProtocolServer) -> GeminiLlm:
    return GeminiLlm("gemini-2.5-flash", http_options={"base_url": server.url}, retry=None)


def test_a_changed_static_instruction_makes_a_new_cache(
    gemini_server: GeminiProtocolServer,
) -> None:
    model = gemini(gemini_server)
    converse(model, 2, CONFIG)
    converse(model, 2, CONFIG, description="Now with a description.")

    assert gemini_server.caches_created == 2
    creates = [r.json() for r in gemini_server.requests if r.path.endswith("cachedContents")]
    assert "Now with a description." in creates[1]["systemInstruction"]["parts"][0]["text"]


def test_openai_compatible_requests_share_a_byte_identical_prefix() -> None:
    def completion(_: Any) -> Any:
        return json_reply(
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": "5 days."}}]}
        )

    with serving_fake() as server:
        server.push(*(completion(n) for n in range(3)))
        model = OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", retry=None)
        converse(model, 3, CONFIG, stream=False)
        bodies = [e.json()["messages"] for e in server.exchanges]

    for earlier, later in itertools.pairwise(bodies):
        stable = len(earlier) - 2  # all but this turn's instruction and question
        assert later[:stable] == earlier[:stable]
        assert later[stable] == earlier[-1]  # the question, now history
    assert bodies[0][0] == {"role": "system", "content": bodies[2][0]["content"]}
    assert bodies[0][0]["content"].startswith(HANDBOOK)
    assert "tier is silver" in bodies[0][1]["content"]
    assert "tier is gold" in bodies[1][-2]["content"]


def test_claude_gets_breakpoints_after_the_system_and_the_stable_history() -> None:
    with serving_fake() as server:
        server.push(*(message(text("5 days."), cache_read_input_tokens=4000) for _ in range(3)))
        model = AnthropicLlm("claude-test", api_key="sk-ant-test", base_url=server.url, retry=None)
        runner = converse(model, 3, CONFIG, stream=False)
        bodies = [e.json() for e in server.exchanges]

    control = {"type": "ephemeral"}
    for body in bodies:
        assert body["system"][0]["cache_control"] == control
        assert body["system"][0]["text"].startswith(HANDBOOK)
    assert "cache_control" not in str(bodies[0]["messages"])  # no history yet
    # Later: the last answer before this turn carries the breakpoint.
    for body in bodies[1:]:
        answer = body["messages"][-3]
        assert answer["role"] == "assistant"
        assert answer["content"][-1]["cache_control"] == control
    session = runner.session_service.get_session(app_name="desk", user_id="u", session_id="s")
    assert summarize_usage(session.run().events).total.cached_tokens == 3 * 4000  # type: ignore[union-attr]
