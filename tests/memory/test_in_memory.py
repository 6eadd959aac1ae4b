"""InMemoryMemoryService: add, replace, search by word, scope and entry fields."""

from __future__ import annotations

import asyncio

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.memory import InMemoryMemoryService, SearchMemoryResponse
from adk_rx.sessions import Session


def _text_event(author: str, text: str, timestamp: float = 0.0) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        timestamp=timestamp,
    )


def _session(*events: Event, session_id: str = "s1", app: str = "app", user: str = "u1") -> Session:
    return Session(id=session_id, app_name=app, user_id=user, events=list(events))


def _complete(completable: Observable[None]) -> None:
    # A Completable emits nothing, so ``run()`` alone would raise; collect to a list instead.
    assert completable.pipe(ops.to_list()).run() == []


def _search(
    service: InMemoryMemoryService, query: str, *, app: str = "app", user: str = "u1"
) -> SearchMemoryResponse:
    return service.search_memory(app_name=app, user_id=user, query=query).run()


def _texts(response: SearchMemoryResponse) -> list[str]:
    return [part.text or "" for entry in response.memories for part in entry.content.parts or []]


def test_search_matches_a_shared_word_ignoring_case_and_punctuation() -> None:
    service = InMemoryMemoryService()
    _complete(
        service.add_session_to_memory(
            _session(_text_event("user", "My NAME is Ada."), _text_event("bot", "Nice to meet you"))
        )
    )

    assert _texts(_search(service, "what is my name?")) == ["My NAME is Ada."]
    assert _texts(_search(service, "ADA")) == ["My NAME is Ada."]
    assert _texts(_search(service, "meet!")) == ["Nice to meet you"]
    assert _search(service, "bicycle").memories == []


def test_a_query_without_words_finds_nothing() -> None:
    service = InMemoryMemoryService()
    _complete(service.add_session_to_memory(_session(_text_event("user", "hello"))))

    assert _search(service, " ?! ").memories == []


def test_entries_carry_content_author_and_iso_utc_timestamp() -> None:
    service = InMemoryMemoryService()
    event = _text_event("helper", "the answer is 42", timestamp=1_700_000_000.5)
    _complete(service.add_session_to_memory(_session(event)))

    [entry] = _search(service, "answer").memories

    assert entry.author == "helper"
    assert entry.content == event.content
    assert entry.timestamp == "2023-11-14T22:13:20.500000+00:00"


def test_search_is_scoped_to_app_and_user() -> None:
    service = InMemoryMemoryService()
    _complete(service.add_session_to_memory(_session(_text_event("user", "apples"), user="u1")))
    _complete(
        service.add_session_to_memory(
            _session(_text_event("user", "apples too"), session_id="s2", user="u2")
        )
    )
    _complete(
        service.add_session_to_memory(
            _session(_text_event("user", "apples elsewhere"), session_id="s3", app="other")
        )
    )

    assert _texts(_search(service, "apples")) == ["apples"]
    assert _texts(_search(service, "apples", user="u2")) == ["apples too"]
    assert _texts(_search(service, "apples", app="other")) == ["apples elsewhere"]
    assert _search(service, "apples", user="nobody").memories == []


def test_re_adding_a_session_replaces_its_entries() -> None:
    service = InMemoryMemoryService()
    _complete(service.add_session_to_memory(_session(_text_event("user", "old fact"))))
    _complete(
        service.add_session_to_memory(
            _session(_text_event("user", "old fact"), _text_event("user", "new fact"))
        )
    )

    assert _texts(_search(service, "fact")) == ["old fact", "new fact"]


def test_events_without_text_are_not_remembered() -> None:
    call = Event(
        author="bot",
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="lookup", args={"q": "x"}))],
        ),
    )
    empty = Event(author="bot")
    service = InMemoryMemoryService()
    _complete(
        service.add_session_to_memory(_session(call, empty, _text_event("user", "lookup done")))
    )

    assert _texts(_search(service, "lookup")) == ["lookup done"]


def test_adding_is_cold_until_subscribed() -> None:
    service = InMemoryMemoryService()
    adding = service.add_session_to_memory(_session(_text_event("user", "cold")))

    assert _search(service, "cold").memories == []
    _complete(adding)
    assert _texts(_search(service, "cold")) == ["cold"]


def test_adding_a_session_runs_and_awaits_to_none() -> None:
    memory = InMemoryMemoryService()
    session = Session(id="s", app_name="app", user_id="u", events=[])
    assert memory.add_session_to_memory(session).run() is None

    async def awaited() -> object:
        return await memory.add_session_to_memory(session)

    assert asyncio.run(awaited()) is None
