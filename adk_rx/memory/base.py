"""The memory-service seam: remember sessions, search what was said."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import reactivex
from google.genai import types
from reactivex import Observable

from adk_rx.rx._engine.awaitable import awaitable_results
from adk_rx.sessions.session import Session

__all__ = ["BaseMemoryService", "MemoryEntry", "SearchMemoryResponse"]


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered piece of a conversation.

    Attributes:
        content: what was said.
        author: who said it (an agent name or ``"user"``).
        timestamp: when it was said, ISO 8601 (UTC).
        score: how closely it matches the search, for services that rank (the cosine
            similarity for :class:`~adk_rx.memory.VectorMemoryService`); None otherwise.
    """

    content: types.Content
    author: str | None = None
    timestamp: str | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class SearchMemoryResponse:
    """The result of a memory search."""

    memories: list[MemoryEntry] = field(default_factory=list)


class BaseMemoryService(ABC):
    """Long-term memory across sessions, scoped to an app and a user."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every implementation's results can be awaited from asyncio
        # (see adk_rx.rx._engine.awaitable).
        awaitable_results(
            cls, ("add_session_to_memory", "search_memory", "delete_session_memories")
        )

    @abstractmethod
    def add_session_to_memory(self, session: Session) -> Observable[None]:
        """Remembers the session's events (re-adding a session replaces it); a Completable."""

    @abstractmethod
    def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> Observable[SearchMemoryResponse]:
        """Finds remembered entries of this app and user that match ``query``; a Single."""

    def delete_session_memories(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Forgets what was remembered of the session; a Completable. The default forgets
        nothing (a memory service that cannot tell sessions apart keeps its entries)."""
        return reactivex.empty()
