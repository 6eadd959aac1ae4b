"""InMemoryMemoryService: remembered sessions in process memory, searched by word."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime

from reactivex import Observable

from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.rx._engine.sync import completable, single
from adk_rx.sessions.session import Session

__all__ = ["InMemoryMemoryService", "words"]

# Letters and digits of any script; everything else (spaces, punctuation) separates words.
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> frozenset[str]:
    """The case-folded words of ``text``, punctuation dropped (``"Name?"`` -> ``{"name"}``)."""
    return frozenset(_WORD.findall(text.casefold()))


class _Remembered:
    """One remembered event: the entry handed out and the words it is found by."""

    __slots__ = ("entry", "words")

    def __init__(self, entry: MemoryEntry, words: frozenset[str]) -> None:
        self.entry = entry
        self.words = words


def _remember(session: Session) -> list[_Remembered]:
    remembered: list[_Remembered] = []
    for event in session.events:
        content = event.content
        if event.partial or content is None or not content.parts:
            continue  # a partial event is a fragment of one stored whole
        # Only text is searchable; events with none (function calls, blobs) are skipped.
        text = " ".join(part.text for part in content.parts if part.text)
        if not text:
            continue
        timestamp = datetime.fromtimestamp(event.timestamp, tz=UTC).isoformat()
        entry = MemoryEntry(content=content, author=event.author, timestamp=timestamp)
        remembered.append(_Remembered(entry, words(text)))
    return remembered


class InMemoryMemoryService(BaseMemoryService):
    """Keeps the text events of added sessions, per app and user; thread-safe.

    A search matches an event when the query and the event's text share at least one word
    (case and punctuation do not matter). Results keep the order in which sessions were
    added and, within a session, the order of its events.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app_name, user_id) -> session id -> remembered events of that session
        self._sessions: dict[tuple[str, str], dict[str, list[_Remembered]]] = {}

    def add_session_to_memory(self, session: Session) -> Observable[None]:
        """Remembers the session's text events, replacing what was remembered of it before."""

        def add() -> None:
            remembered = _remember(session)
            with self._lock:
                by_session = self._sessions.setdefault((session.app_name, session.user_id), {})
                # Re-adding moves the session to the end: it is the freshest memory.
                by_session.pop(session.id, None)
                by_session[session.id] = remembered

        return completable(add)

    def delete_session_memories(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[None]:
        """Forgets what was remembered of the session."""

        def forget() -> None:
            with self._lock:
                self._sessions.get((app_name, user_id), {}).pop(session_id, None)

        return completable(forget)

    def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> Observable[SearchMemoryResponse]:
        """Emits the remembered entries of this app and user that share a word with ``query``."""

        def search() -> SearchMemoryResponse:
            wanted = words(query)
            if not wanted:
                return SearchMemoryResponse()
            with self._lock:
                sessions = list(self._sessions.get((app_name, user_id), {}).values())
            return SearchMemoryResponse(
                memories=[
                    item.entry
                    for remembered in sessions
                    for item in remembered
                    if not wanted.isdisjoint(item.words)
                ]
            )

        return single(search)
