"""GeminiContextCache: the stable prefix of Gemini requests kept as cached contents.

With a ``cache_config`` on the request, the stable prefix (system instruction, tools, tool
config and the leading history, :mod:`adk_rx.models.context_cache`) is stored once with
``caches.create`` and later requests name it (``cached_content``) and send only what follows
it. A cache is found by a fingerprint of the prefix it holds: a chain of hashes, one per
leading content, so a request finds the longest cached prefix of its own::

    h0 = H(model, system instruction, tools, tool config)      h(i+1) = H(h(i), contents[i])

A request                               the cache it uses
first of a conversation                 a new one of its stable prefix (made before the call)
later, same prefix, within the TTL      the longest live one whose fingerprint it repeats
after ``cache_intervals`` uses          a new one of its (longer) stable prefix; the old deleted
system instruction or tools changed     h0 differs: a new one
past the TTL                            a new one (the expired entry is dropped)

A cache that cannot be made (a prefix under ``min_tokens`` or Gemini's minimum for the
model, a creation the API refuses) leaves the request uncached, never failed; a refused
prefix is not tried again until it changes. The clock is a scheduler's, so a
``TestScheduler`` drives expiry in virtual time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google import genai
from google.genai import types
from reactivex import abc

from adk_rx.models.context_cache import (
    ContextCacheConfig,
    estimate_prefix_tokens,
    stable_prefix_count,
)

__all__ = ["GeminiContextCache", "minimum_cache_tokens"]

_log = logging.getLogger("adk_rx.models")


def minimum_cache_tokens(model: str) -> int:
    """Gemini's smallest cacheable prefix for a named model (0 when it is not known)."""
    name = model.rsplit("/", 1)[-1]
    if name.startswith("gemini-2.5-"):
        return 2048
    if name.startswith("gemini-3"):
        return 4096
    return 0


def _fingerprints(
    model: str, config: types.GenerateContentConfig, contents: Sequence[types.Content]
) -> list[str]:
    """``[h0, h1, ..., hk]``: the fingerprint of the prefix holding the first i contents."""
    head = config.model_dump(
        mode="json", include={"system_instruction", "tools", "tool_config"}, exclude_none=True
    )
    text = json.dumps({"model": model, **head}, sort_keys=True, default=str)
    chain = [hashlib.sha256(text.encode()).hexdigest()]
    for content in contents:
        step = chain[-1] + content.model_dump_json(exclude_none=True)
        chain.append(hashlib.sha256(step.encode()).hexdigest())
    return chain


@dataclass
class _Entry:
    """One cached content: its name, how many contents it holds, when it expires."""

    name: str
    count: int
    expires: datetime
    uses: int = 0


@dataclass(frozen=True, slots=True)
class CachedPrefix:
    """What a request sends with a cache: the cache's name and the contents after it."""

    name: str
    config: types.GenerateContentConfig
    contents: list[types.Content]


class GeminiContextCache:
    """The caches one :class:`~adk_rx.models.GeminiLlm` made, by prefix fingerprint.

    Args:
        scheduler: the clock that expires caches.
    """

    def __init__(self, scheduler: abc.SchedulerBase) -> None:
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._refused: dict[str, datetime] = {}  # prefixes the API would not cache, until when
        self._creating: set[str] = set()

    def forget(self, name: str) -> None:
        """Drops the cache ``name`` (the API no longer knows it)."""
        with self._lock:
            for key in [k for k, e in self._entries.items() if e.name == name]:
                del self._entries[key]

    async def prefix(
        self,
        client: genai.Client,
        model: str,
        cache: ContextCacheConfig,
        config: types.GenerateContentConfig,
        contents: list[types.Content],
    ) -> CachedPrefix | None:
        """The cache this request should use (made now if needed), or None to send it whole."""
        stable = stable_prefix_count(contents)
        chain = _fingerprints(model, config, contents[:stable])
        now = self._scheduler.now
        with self._lock:
            self._prune(now)
            found = next(
                ((h, self._entries[h]) for h in reversed(chain) if h in self._entries), None
            )
            wanted = chain[-1]
            grow = found is None or (
                found[1].uses >= cache.cache_intervals and found[1].count < stable
            )
            if grow and (wanted in self._creating or wanted in self._refused):
                grow = False
            if grow:
                self._creating.add(wanted)
            elif found is not None:
                found[1].uses += 1
        if not grow:
            return None if found is None else _apply(found[1], config, contents)
        try:
            entry = await self._create(client, model, cache, config, contents[:stable], now)
        finally:
            with self._lock:
                self._creating.discard(wanted)
        with self._lock:
            if entry is None:
                self._refused[wanted] = now + timedelta(seconds=cache.ttl_seconds)
                if found is not None:
                    found[1].uses += 1
                return None if found is None else _apply(found[1], config, contents)
            self._entries[wanted] = entry
            entry.uses = 1
            old = self._entries.pop(found[0]) if found is not None else None
        if old is not None:
            await _delete(client, old.name)
        return _apply(entry, config, contents)

    def _prune(self, now: datetime) -> None:
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            del self._entries[key]
        for key in [k for k, until in self._refused.items() if until <= now]:
            del self._refused[key]

    async def _create(
        self,
        client: genai.Client,
        model: str,
        cache: ContextCacheConfig,
        config: types.GenerateContentConfig,
        contents: list[types.Content],
        now: datetime,
    ) -> _Entry | None:
        floor = max(cache.min_tokens, minimum_cache_tokens(model))
        if estimate_prefix_tokens(config, contents) < floor:
            return None
        try:
            created = await client.aio.caches.create(
                model=model,
                config=types.CreateCachedContentConfig(
                    contents=list(contents) or None,
                    system_instruction=config.system_instruction,
                    tools=[t for t in config.tools or [] if isinstance(t, types.Tool)] or None,
                    tool_config=config.tool_config,
                    ttl=cache.ttl,
                    display_name=f"adk-rx-{len(contents)}-contents",
                    http_options=cache.create_http_options,
                ),
            )
        except Exception as exc:  # an uncached call still works: say why and go on
            _log.warning("Gemini did not cache the request prefix (%s); sending it whole", exc)
            return None
        if not created.name:
            return None
        # Our clock, with a margin, so a request never names a cache about to expire.
        margin = min(30.0, cache.ttl_seconds / 10)
        expires = now + timedelta(seconds=cache.ttl_seconds - margin)
        return _Entry(name=created.name, count=len(contents), expires=expires)


def _apply(
    entry: _Entry, config: types.GenerateContentConfig, contents: list[types.Content]
) -> CachedPrefix:
    # The cache holds the instruction and tools; Gemini refuses them beside cached_content.
    update: dict[str, Any] = {
        "system_instruction": None,
        "tools": None,
        "tool_config": None,
        "cached_content": entry.name,
    }
    # The API refuses a request without contents: the last one goes even if cached.
    start = min(entry.count, max(len(contents) - 1, 0))
    return CachedPrefix(entry.name, config.model_copy(update=update), contents[start:])


async def _delete(client: genai.Client, name: str) -> None:
    try:
        await client.aio.caches.delete(name=name)
    except Exception as exc:  # it expires by itself anyway
        _log.info("could not delete Gemini cache %s: %s", name, exc)
