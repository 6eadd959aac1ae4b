"""VectorMemoryService: long-term memory ranked by meaning, on SQLite or PostgreSQL.

Adding a session cuts it into turns (:func:`~adk_rx.memory.chunks.session_chunks`), embeds
the turns not stored yet and replaces the session's chunks in one transaction::

    add_session_to_memory(s):  --read keys--embed new turns--write--|
    search_memory(q):          --embed q--nearest chunks of (app, user)--SearchMemoryResponse|

A search returns the ``top_k`` turns nearest to the query, most similar first, each a
:class:`~adk_rx.memory.base.MemoryEntry` with its ``score`` (the cosine similarity) and the
time of its first event; its content is one text part of ``author: text`` lines. Entries
scoring below ``min_score`` are left out. Everything is scoped to the app and user;
``delete_session_memories`` (called by ``Runner.delete_session``) forgets one session.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import partial
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError, StoreError
from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.memory.chunks import DEFAULT_MAX_CHARS, Chunk, session_chunks
from adk_rx.memory.embedder import Embedder, Vector
from adk_rx.memory.vector_store import Hit, NewChunk, VectorStore
from adk_rx.rx import from_blocking
from adk_rx.rx._engine.sync import single
from adk_rx.sessions.session import Session

__all__ = ["VectorMemoryService", "memory_scope"]


def memory_scope(app_name: str, user_id: str) -> str:
    """The store scope of one app's user (unambiguous whatever the names hold)."""
    return json.dumps(["memory", app_name, user_id])


def _entry(hit: Hit) -> MemoryEntry:
    return MemoryEntry(
        content=types.Content(role="user", parts=[types.Part(text=hit.text)]),
        timestamp=datetime.fromtimestamp(hit.timestamp, tz=UTC).isoformat(),
        score=hit.score,
    )


class VectorMemoryService(BaseMemoryService):
    """Memory searched by similarity of meaning (embeddings), scoped to an app and a user.

    Creating the service does no I/O; the tables are created on first use (see
    :mod:`adk_rx.memory.vector_store` for them and for how each database searches).

    Args:
        url: ``sqlite:///path.db``, ``postgresql://user@host/db``, or ``memory://`` (SQLite
            in this process). It may be the database of the sessions.
        embedder: turns texts into vectors (:class:`~adk_rx.memory.HashingEmbedder`,
            :class:`~adk_rx.memory.LocalEmbedder`, ...). A database keeps the vectors of one
            embedder: opening it with another raises ConfigurationError.
        top_k: how many entries a search returns at most.
        min_score: leave out entries whose cosine similarity is below this (None: keep all).
        max_chunk_chars: a turn longer than this is remembered as several entries.
        use_index: search with sqlite-vec / pgvector when they are available (False: an
            exact scan).
        exact_up_to: on SQLite with sqlite-vec, a user's memories are searched exactly up to
            this many entries, and through the binary index past it.
        candidates: how many entries the binary index hands to the exact ranking.
        scheduler: where blocking database work runs (default: the shared I/O scheduler).
        **engine_options: passed to the SQL engine (``pool_size``, ...).
    """

    def __init__(
        self,
        url: str,
        embedder: Embedder,
        *,
        top_k: int = 10,
        min_score: float | None = None,
        max_chunk_chars: int = DEFAULT_MAX_CHARS,
        use_index: bool = True,
        exact_up_to: int = 5000,
        candidates: int = 64,
        scheduler: abc.SchedulerBase | None = None,
        **engine_options: Any,
    ) -> None:
        if not isinstance(embedder, Embedder):
            raise ConfigurationError(
                f"embedder must be an Embedder (name, dimension, embed), got {embedder!r}"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigurationError(f"top_k must be an int >= 1, got {top_k!r}")
        if max_chunk_chars < 100:
            raise ConfigurationError(f"max_chunk_chars must be >= 100, got {max_chunk_chars!r}")
        self.embedder = embedder
        self.top_k = top_k
        self.min_score = min_score
        self.max_chunk_chars = max_chunk_chars
        self._scheduler = scheduler
        self.store = VectorStore(
            "sqlite://" if url == "memory://" else url,
            embedder_name=embedder.name,
            dimension=embedder.dimension,
            use_index=use_index,
            exact_up_to=exact_up_to,
            candidates=candidates,
            **engine_options,
        )

    def add_session_to_memory(self, session: Session) -> Observable[None]:
        """Remembers the session's turns, replacing what was remembered of it before; only
        turns not stored yet are embedded."""
        scope = memory_scope(session.app_name, session.user_id)
        return rx.defer(
            lambda _: self.store_chunks(
                scope, session.id, session_chunks(session, max_chars=self.max_chunk_chars)
            )
        )

    # -- any scope: what memory and document indexes (adk_rx.memory.files) build on -------------

    def store_chunks(
        self, scope: str, source: str, chunks: list[Chunk], *, fingerprint: str | None = None
    ) -> Observable[None]:
        """A Completable: embeds the chunks the store lacks, then makes them the source's
        chunks (and ``fingerprint`` its fingerprint) in one transaction."""
        keys = [c.key for c in chunks]

        def embedded(wanted: list[Chunk]) -> Observable[dict[str, NewChunk]]:
            fresh = list({c.key: c for c in wanted}.values())
            return self.embedder.embed([c.text for c in fresh]).pipe(
                ops.map(lambda vectors: _paired(fresh, vectors))
            )

        def write(new: dict[str, NewChunk], rounds: int) -> Observable[None]:
            def written(missing: list[str]) -> Observable[None]:
                if not missing:
                    return rx.empty()
                if rounds >= 3:  # pragma: no cover - needs three concurrent deletions
                    raise StoreError(f"memory of {source!r} kept changing while it was stored")
                lacking = [c for c in chunks if c.key in set(missing)]
                return embedded(lacking).pipe(
                    ops.flat_map(lambda more: write({**new, **more}, rounds + 1))
                )

            replace = partial(self.store.replace, scope, source, keys, new, fingerprint=fingerprint)
            return from_blocking(replace, self._scheduler).pipe(ops.flat_map(written))

        def start(stored: list[tuple[int, str]]) -> Observable[None]:
            have = {key for _, key in stored}
            return embedded([c for c in chunks if c.key not in have]).pipe(
                ops.flat_map(lambda new: write(new, 1))
            )

        return from_blocking(lambda: self.store.keys(scope, source), self._scheduler).pipe(
            ops.flat_map(start), ops.ignore_elements()
        )

    def forget_source(self, scope: str, source: str) -> Observable[None]:
        """A Completable: deletes a source's chunks and fingerprint."""
        return from_blocking(lambda: self.store.delete_source(scope, source), self._scheduler).pipe(
            ops.ignore_elements()
        )

    def fingerprints(self, scope: str) -> Observable[dict[str, str]]:
        """A Single: source -> the fingerprint it was stored with."""
        return from_blocking(lambda: self.store.fingerprints(scope), self._scheduler)

    def search_scope(self, scope: str, query: str, k: int) -> Observable[list[Hit]]:
        """A Single: the ``k`` chunks of ``scope`` most similar to ``query`` that score at
        least ``min_score``, most similar first (none for a blank query)."""
        if not query.strip():
            return single(list)

        def nearest(vectors: list[Vector]) -> Observable[list[Hit]]:
            def search() -> list[Hit]:
                hits = self.store.search(scope, vectors[0], k)
                floor = self.min_score
                return [hit for hit in hits if floor is None or hit.score >= floor]

            return from_blocking(search, self._scheduler)

        return self.embedder.embed([query], is_query=True).pipe(ops.flat_map(nearest))

    # -- the memory seam ----------------------------------------------------------------------

    def delete_session_memories(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Forgets what was remembered of the session."""
        return self.forget_source(memory_scope(app_name, user_id), session_id)

    def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> Observable[SearchMemoryResponse]:
        """Emits the ``top_k`` entries of this app and user most similar to ``query``."""
        hits = self.search_scope(memory_scope(app_name, user_id), query, self.top_k)
        return hits.pipe(ops.map(lambda found: SearchMemoryResponse([_entry(h) for h in found])))

    def close(self) -> None:
        """Closes the pooled database connections."""
        self.store.close()

    def __repr__(self) -> str:
        return f"VectorMemoryService(embedder={self.embedder!r}, top_k={self.top_k})"


def _paired(chunks: list[Chunk], vectors: list[Vector]) -> dict[str, NewChunk]:
    return {
        c.key: NewChunk(c.key, c.timestamp, c.text, vector)
        for c, vector in zip(chunks, vectors, strict=True)
    }
