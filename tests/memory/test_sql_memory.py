"""SqlMemoryService on SQLite (FTS5) and PostgreSQL (tsvector)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.genai import types
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.memory.base import SearchMemoryResponse
from adk_rx.memory.sql import SqlMemoryService
from adk_rx.sessions.session import Session
from tests.sessions.postgres import fresh_postgres_url

__all__ = ["fresh_postgres_url"]  # a fixture, used by name


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlMemoryService]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'memory.db'}"
    else:
        url = request.getfixturevalue("fresh_postgres_url")
    service = SqlMemoryService(url)
    yield service
    service.close()


def _said(author: str, text: str, timestamp: float) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=timestamp)


def _session(sid: str, *events: Event, app: str = "app", user: str = "u") -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=list(events))


def _add(memory: SqlMemoryService, session: Session) -> None:
    assert memory.add_session_to_memory(session).pipe(ops.to_list()).run() == []


def _search(memory: SqlMemoryService, query: str, app: str = "app", user: str = "u") -> list[str]:
    response: SearchMemoryResponse = memory.search_memory(
        app_name=app, user_id=user, query=query
    ).run()
    return ["".join(p.text or "" for p in m.content.parts or []) for m in response.memories]


def test_a_word_of_the_query_finds_the_event(memory: SqlMemoryService) -> None:
    _add(
        memory,
        _session("s1", _said("user", "My dog is called Rex", 1.0), _said("bot", "Nice!", 2.0)),
    )
    assert _search(memory, "what is my DOG's name?") == ["My dog is called Rex"]
    assert _search(memory, "cat") == []


def test_entries_carry_author_and_iso_utc_timestamp(memory: SqlMemoryService) -> None:
    _add(memory, _session("s1", _said("bot", "the answer is 42", 86400.0)))
    (entry,) = memory.search_memory(app_name="app", user_id="u", query="answer").run().memories
    assert entry.author == "bot"
    assert entry.timestamp == "1970-01-02T00:00:00+00:00"
    assert entry.content.role == "model"


def test_search_is_scoped_to_app_and_user(memory: SqlMemoryService) -> None:
    _add(memory, _session("s1", _said("user", "secret plan", 1.0), user="alice"))
    _add(memory, _session("s1", _said("user", "secret recipe", 1.0), app="other", user="bob"))
    assert _search(memory, "secret", user="alice") == ["secret plan"]
    assert _search(memory, "secret", user="bob") == []
    assert _search(memory, "secret", app="other", user="bob") == ["secret recipe"]


def test_adding_a_session_again_replaces_it(memory: SqlMemoryService) -> None:
    _add(memory, _session("s1", _said("user", "first draft", 1.0)))
    _add(memory, _session("s1", _said("user", "second draft", 1.0), _said("bot", "draft ok", 2.0)))
    assert _search(memory, "draft") == ["second draft", "draft ok"]


def test_results_keep_the_order_sessions_were_added(memory: SqlMemoryService) -> None:
    _add(memory, _session("s1", _said("user", "apple one", 1.0), _said("user", "apple two", 2.0)))
    _add(memory, _session("s2", _said("user", "apple three", 0.5)))
    assert _search(memory, "apple") == ["apple one", "apple two", "apple three"]


def test_events_without_text_are_not_remembered(memory: SqlMemoryService) -> None:
    call = types.Part(function_call=types.FunctionCall(name="lookup", args={"q": "weather"}))
    tool_event = Event(author="bot", content=types.Content(role="model", parts=[call]))
    _add(memory, _session("s1", tool_event, _said("user", "weather is fine", 1.0)))
    assert _search(memory, "weather lookup") == ["weather is fine"]


def test_search_syntax_in_a_query_is_not_interpreted(memory: SqlMemoryService) -> None:
    _add(memory, _session("s1", _said("user", "near the river", 1.0)))
    assert _search(memory, 'river" OR NEAR( * -x & !y | "') == ["near the river"]
    assert _search(memory, "?!") == []


def test_adding_a_session_runs_to_none(memory: SqlMemoryService) -> None:
    session = _session("s", _said("user", "hello there", 1.0))
    assert memory.add_session_to_memory(session).run() is None
