"""ContextCacheConfig, and the stable prefix of a request that a provider may cache.

A request is laid out so that what changes least comes first::

    system instruction (static instruction first)  tools  leading history | last user turn
    \\_________________________ stable prefix ____________________________/ \\__ changes __/

The stable prefix is everything before the last run of user contents: the new user message,
the answers to the calls of the previous step, and the templated (dynamic) instruction that
the flow places beside them when the agent has a ``static_instruction``. The next request of
the conversation starts with the same prefix, longer by this turn, so a provider that caches
prefixes reads it from the cache instead of processing it again:

* Gemini: :mod:`adk_rx.models.gemini_cache` stores the prefix as a cached content and sends
  only what follows it;
* Anthropic: ``cache_control`` marks the last block of the tools, of the system instruction
  and of the stable history (:mod:`adk_rx.models.anthropic_messages`);
* OpenAI-compatible servers cache identical leading tokens by themselves; the layout alone is
  what lets them hit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from google.genai import types

from adk_rx.errors import ConfigurationError

__all__ = ["ContextCacheConfig", "estimate_prefix_tokens", "stable_prefix_count"]


@dataclass(frozen=True, slots=True)
class ContextCacheConfig:
    """Caching of the stable request prefix, for every LlmAgent of an app.

    Set on the app (``App(context_cache_config=ContextCacheConfig())``); without it nothing
    is cached explicitly. The fields mean what they mean in google-adk.

    Attributes:
        cache_intervals: uses of one Gemini cache after which it is rebuilt to take in the
            conversation that has grown behind it (1 to 100).
        ttl_seconds: how long a cache lives on the provider (Gemini: exactly; Anthropic:
            5 minutes, or an hour when this is 3600 or more).
        min_tokens: the smallest prefix worth caching, estimated at four characters a token
            (Gemini's own minimum for a named model applies as well).
        create_http_options: HTTP options for Gemini's cache creation call (e.g. a timeout);
            a creation that fails leaves the request uncached, never failed.
    """

    cache_intervals: int = 10
    ttl_seconds: int = 1800
    min_tokens: int = 0
    create_http_options: types.HttpOptions | None = None

    def __post_init__(self) -> None:
        checks = (
            ("cache_intervals", self.cache_intervals, 1, 100),
            ("ttl_seconds", self.ttl_seconds, 1, None),
            ("min_tokens", self.min_tokens, 0, None),
        )
        for name, value, low, high in checks:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigurationError(f"{name} must be an int >= {low}, got {value!r}")
            if high is not None and value > high:
                raise ConfigurationError(f"{name} must be at most {high}, got {value!r}")

    @property
    def ttl(self) -> str:
        """The lifetime as Gemini spells it (``"1800s"``)."""
        return f"{self.ttl_seconds}s"


def stable_prefix_count(contents: Sequence[types.Content]) -> int:
    """How many leading contents the next request of the conversation will repeat.

    All of them up to the last run of user contents (that run is this turn's news).
    """
    count = len(contents)
    while count and contents[count - 1].role == "user":
        count -= 1
    return count


def estimate_prefix_tokens(
    config: types.GenerateContentConfig, contents: Sequence[types.Content]
) -> int:
    """A rough size of a prefix: four characters a token of instruction, tools and text."""
    chars = 0
    instruction = config.system_instruction
    if isinstance(instruction, str):
        chars += len(instruction)
    elif isinstance(instruction, types.Content):
        chars += sum(len(p.text or "") for p in instruction.parts or [])
    for tool in config.tools or []:
        if isinstance(tool, types.Tool):
            chars += len(json.dumps(tool.model_dump(mode="json", exclude_none=True)))
    for content in contents:
        for part in content.parts or []:
            if part.text:
                chars += len(part.text)
            elif part.function_call is not None or part.function_response is not None:
                chars += len(part.model_dump_json(exclude_none=True))
    return chars // 4
