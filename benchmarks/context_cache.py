"""Context caching on Gemini: what a long static instruction costs with and without a cache.

    python benchmarks/context_cache.py [--turns 20] [--tokens 4000]

Runs the same conversation twice through a Runner, an LlmAgent with a ``static_instruction``
of ``--tokens`` tokens (four characters a token) and a templated ``instruction``, and
GeminiLlm with google-genai's client, against a local Gemini protocol server (the tests' own,
with the cachedContents endpoints): once without and once with
``App(context_cache_config=ContextCacheConfig(cache_intervals=10, ttl_seconds=1800))``.
It counts what the server received: requests, requests that named a cache, caches made, and
request bytes (cache creations and deletions included).

Prints the machine's load (``os.getloadavg``) with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from report import print_table, progress, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adk_rx import App, InMemorySessionService, LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.apps import ContextCacheConfig
from adk_rx.models.gemini import GeminiLlm
from tests.models._fakes import serving
from tests.models._gemini_server import GeminiProtocolServer

SAVED_AIM = ">= 80"


def _handbook(tokens: int) -> str:
    rules = "".join(
        f"Rule {n}: refunds for order class {n % 7} are handled by desk {n % 5} within "
        f"{n % 9 + 1} days; escalate anything unusual to a supervisor. "
        for n in range(tokens)
    )
    return rules[: tokens * 4]


def _converse(
    server: GeminiProtocolServer, turns: int, handbook: str, cache: ContextCacheConfig | None
) -> float:
    model = GeminiLlm("gemini-2.5-flash", http_options={"base_url": server.url}, retry=None)
    agent = LlmAgent(
        name="desk",
        model=model,
        static_instruction=handbook,
        instruction="The customer's tier is {tier}.",
    )
    runner = Runner(
        app=App(name="desk", root_agent=agent, context_cache_config=cache),
        session_service=InMemorySessionService(),
    )
    config = RunConfig(auto_create_session=True, streaming_mode=StreamingMode.SSE)
    started = time.perf_counter()
    for n in range(turns):
        for event in runner.run(
            user_id="u",
            session_id="s",
            new_message=f"Question {n + 1}: how long does a refund take?",
            state_delta={"tier": "gold" if n % 2 else "silver"},
            run_config=config,
        ):
            if event.error_code:
                raise SystemExit(f"turn {n + 1} failed: {event.error_message}")
    return (time.perf_counter() - started) / turns * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=4000)
    args = parser.parse_args()
    os.environ.setdefault("GOOGLE_API_KEY", "local")
    handbook = _handbook(args.tokens)
    cache = ContextCacheConfig(cache_intervals=10, ttl_seconds=1800, min_tokens=0)
    with serving(GeminiProtocolServer()) as plain, serving(GeminiProtocolServer()) as cached:
        progress(f"{args.turns} turns without a cache")
        plain_ms = _converse(plain, args.turns, handbook, None)
        progress(f"{args.turns} turns with ContextCacheConfig")
        cached_ms = _converse(cached, args.turns, handbook, cache)
    saved = 100 * (1 - cached.bytes_sent / plain.bytes_sent)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.turns} turns, a {args.tokens}-token static instruction; load average: {load}")
    print_table(
        ["figure", "no cache", "cache", "aim", "verdict"],
        [
            ["model requests", str(len(plain.generate_requests())),
             str(len(cached.generate_requests())), "", ""],
            ["requests naming a cache", str(plain.cache_hits), str(cached.cache_hits), "", ""],
            ["caches created", str(plain.caches_created), str(cached.caches_created), "", ""],
            ["request bytes", f"{plain.bytes_sent:,}", f"{cached.bytes_sent:,}", "", ""],
            ["request bytes saved (%)", "", f"{saved:.1f}", SAVED_AIM, verdict(saved, SAVED_AIM)],
            ["wall ms/turn (local server)", f"{plain_ms:.1f}", f"{cached_ms:.1f}", "", ""],
        ],
    )  # fmt: skip


if __name__ == "__main__":
    main()
