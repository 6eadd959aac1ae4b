"""A long static instruction cached on Gemini: each turn's line shows the tokens read from cache.

    python examples/context_cache.py            # offline, against a local Gemini protocol server
    python examples/context_cache.py --gemini   # gemini-2.5-flash (needs GOOGLE_API_KEY)

The agent's handbook is its ``static_instruction`` (sent first, never templated); the
customer's tier is a templated ``instruction``, which travels beside each user message so the
start of every request stays the same. ``App(context_cache_config=...)`` keeps that start as
a Gemini cached content: made on the first turn, named by the later ones.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from adk_rx import App, InMemorySessionService, LlmAgent, RunConfig, Runner
from adk_rx.apps import ContextCacheConfig
from adk_rx.models.gemini import GeminiLlm
from adk_rx.usage import TokenUsage

HANDBOOK = "".join(
    f"Rule {n}: refunds for order class {n % 7} go to desk {n % 5} and take {n % 9 + 1} days. "
    for n in range(600)
)  # about 12,000 tokens: above Gemini 2.5's 2,048-token minimum for a cache


@contextlib.contextmanager
def gemini(use_real: bool) -> Iterator[GeminiLlm]:
    if use_real:
        yield GeminiLlm("gemini-2.5-flash")
        return
    # Offline: the local Gemini protocol server adk_rx's tests use (cachedContents included).
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.models._fakes import serving
    from tests.models._gemini_server import GeminiProtocolServer

    os.environ.setdefault("GOOGLE_API_KEY", "local")
    with serving(GeminiProtocolServer()) as server:
        yield GeminiLlm("gemini-2.5-flash", http_options={"base_url": server.url})


def main() -> None:
    with gemini("--gemini" in sys.argv) as model:
        agent = LlmAgent(
            name="desk",
            model=model,
            static_instruction=HANDBOOK,
            instruction="The customer's tier is {tier}. Answer in one sentence.",
        )
        app = App(
            name="desk",
            root_agent=agent,
            context_cache_config=ContextCacheConfig(cache_intervals=10, ttl_seconds=600),
        )
        runner = Runner(app=app, session_service=InMemorySessionService())
        for n, question in enumerate(["How long for class 3?", "And class 4?", "Which desk?"]):
            for event in runner.run(
                user_id="u",
                session_id="s",
                new_message=question,
                state_delta={"tier": ["silver", "gold", "gold"][n]},
                run_config=RunConfig(auto_create_session=True),
            ):
                if event.is_final_response():
                    usage = TokenUsage.of(event.usage_metadata)
                    print(f"turn {n + 1}: {event.content.parts[0].text}  [{usage}]")  # type: ignore[union-attr,index]


if __name__ == "__main__":
    main()
