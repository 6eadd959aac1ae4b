"""A conformance suite for memory services: what every store must do, and what ranking adds.

Run it from pytest, one test per check, so a failure names the behaviour::

    @pytest.mark.parametrize("check", MEMORY_SERVICE_CHECKS)
    def test_my_memory_conforms(check: str) -> None:
        check_memory_service(lambda: MyMemory(...), checks=[check])

    @pytest.mark.parametrize("check", RANKED_MEMORY_CHECKS)
    def test_my_memory_ranks(check: str) -> None:
        check_memory_service(lambda: MyMemory(...), checks=[check])

The first list holds for every memory service, keyword or vector: what a session said is
found, only in its app and user's scope, re-adding replaces, deleting forgets, partial and
textless events are not remembered, the methods are cold and can be awaited. The second holds
for services that rank (``MemoryEntry.score``): scores come most similar first, the closest
memory leads whatever the order sessions were added in, and a session added twice is
remembered once. Its cases share words with their queries, so a keyword-hashing embedder and a
sentence model alike must pass.

Each check gets a fresh service from the factory, uses an app name of its own (so stores on
one database do not see each other's data) and closes the service afterwards when it has a
``close()``. A failed check raises ``AssertionError`` naming the check.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from google.genai import types
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.memory.base import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from adk_rx.sessions.session import Session

__all__ = ["MEMORY_SERVICE_CHECKS", "RANKED_MEMORY_CHECKS", "check_memory_service"]

_Check = Callable[[BaseMemoryService, str], None]
_BASE: dict[str, _Check] = {}
_RANKED: dict[str, _Check] = {}


def _check(fn: _Check) -> _Check:
    _BASE[fn.__name__] = fn
    return fn


def _ranked(fn: _Check) -> _Check:
    _RANKED[fn.__name__] = fn
    return fn


def check_memory_service(
    make_service: Callable[[], BaseMemoryService], *, checks: Iterable[str] | None = None
) -> None:
    """Runs the named checks (by default those of :data:`MEMORY_SERVICE_CHECKS`).

    Args:
        make_service: builds the service under test; called once per check.
        checks: names from :data:`MEMORY_SERVICE_CHECKS` or :data:`RANKED_MEMORY_CHECKS`.

    Raises:
        AssertionError: a check failed; the message names it.
        KeyError: an unknown check name.
    """
    for name in MEMORY_SERVICE_CHECKS if checks is None else list(checks):
        check = _BASE.get(name) or _RANKED[name]
        service = make_service()
        try:
            check(service, f"conformance_{name[:30]}_{uuid.uuid4().hex[:8]}")
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc
        finally:
            close = getattr(service, "close", None)
            if callable(close):
                close()


# -- helpers -------------------------------------------------------------------------------


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _said(author: str, text: str, timestamp: float, **fields: Any) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=timestamp, **fields)


def _session(app: str, sid: str, *events: Event, user: str = "u") -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=list(events))


def _add(svc: BaseMemoryService, session: Session) -> None:
    items = svc.add_session_to_memory(session).pipe(ops.to_list()).run()
    _expect(items == [], f"add_session_to_memory emitted {items!r}; it is a Completable")


def _search(svc: BaseMemoryService, app: str, query: str, user: str = "u") -> list[MemoryEntry]:
    found = svc.search_memory(app_name=app, user_id=user, query=query).run()
    _expect(isinstance(found, SearchMemoryResponse), f"search_memory emitted {found!r}")
    return found.memories


def _text(entry: MemoryEntry) -> str:
    return "\n".join(part.text or "" for part in entry.content.parts or [])


def _texts(entries: list[MemoryEntry]) -> str:
    return "\n---\n".join(_text(entry) for entry in entries)


# -- every memory service ----------------------------------------------------------------


@_check
def search_finds_what_a_session_said(svc: BaseMemoryService, app: str) -> None:
    _add(svc, _session(app, "s1", _said("user", "My dog is called Rex", 1.0)))
    found = _search(svc, app, "dog called Rex")
    _expect(bool(found) and "Rex" in _text(found[0]), f"found {_texts(found)!r}")


@_check
def entries_carry_the_text_and_an_iso_utc_timestamp(svc: BaseMemoryService, app: str) -> None:
    _add(svc, _session(app, "s1", _said("user", "the answer is 42", 86400.0)))
    (entry, *_) = _search(svc, app, "answer 42")
    _expect("the answer is 42" in _text(entry), f"text {_text(entry)!r}")
    _expect(entry.timestamp == "1970-01-02T00:00:00+00:00", f"timestamp {entry.timestamp!r}")


@_check
def an_empty_scope_finds_nothing(svc: BaseMemoryService, app: str) -> None:
    _add(svc, _session(app, "s1", _said("user", "apples and pears", 1.0)))
    _expect(_search(svc, app, "apples", user="nobody") == [], "another user's scope is empty")
    _expect(_search(svc, f"{app}_other", "apples") == [], "another app's scope is empty")


@_check
def search_is_scoped_to_app_and_user(svc: BaseMemoryService, app: str) -> None:
    other_app = f"{app}_other"
    _add(svc, _session(app, "s1", _said("user", "secret plan alpha", 1.0), user="alice"))
    _add(svc, _session(app, "s1", _said("user", "secret plan bravo", 1.0), user="bob"))
    _add(svc, _session(other_app, "s1", _said("user", "secret plan charlie", 1.0), user="alice"))
    for scope_app, user, mine in ((app, "alice", "alpha"), (app, "bob", "bravo")):
        texts = _texts(_search(svc, scope_app, "secret plan", user=user))
        _expect(mine in texts, f"{user} lost their memory: {texts!r}")
        others = {"alpha", "bravo", "charlie"} - {mine}
        _expect(not any(word in texts for word in others), f"{user} sees others': {texts!r}")
    texts = _texts(_search(svc, other_app, "secret plan", user="alice"))
    _expect("charlie" in texts and "alpha" not in texts, f"other app: {texts!r}")


@_check
def re_adding_a_session_replaces_what_it_said(svc: BaseMemoryService, app: str) -> None:
    _add(svc, _session(app, "s1", _said("user", "first draft of the poem", 1.0)))
    _add(svc, _session(app, "s1", _said("user", "second draft of the poem", 2.0)))
    texts = _texts(_search(svc, app, "draft poem"))
    _expect("second draft" in texts and "first draft" not in texts, f"found {texts!r}")


@_check
def deleting_a_session_forgets_it_and_only_it(svc: BaseMemoryService, app: str) -> None:
    _add(svc, _session(app, "s1", _said("user", "secret plan alpha", 1.0)))
    _add(svc, _session(app, "s2", _said("user", "secret plan bravo", 1.0)))
    forgotten = svc.delete_session_memories(app_name=app, user_id="u", session_id="s1")
    _expect(forgotten.pipe(ops.to_list()).run() == [], "delete_session_memories emits nothing")
    texts = _texts(_search(svc, app, "secret plan"))
    _expect("bravo" in texts and "alpha" not in texts, f"found {texts!r}")


@_check
def partial_and_textless_events_are_not_remembered(svc: BaseMemoryService, app: str) -> None:
    call = types.Part(function_call=types.FunctionCall(name="lookup_zebra", args={"q": "x"}))
    events = [
        _said("user", "tell me about the zebra", 1.0),
        Event(author="bot", content=types.Content(role="model", parts=[call]), timestamp=2.0),
        _said("bot", "zebra stripes partially", 3.0, partial=True),
        _said("bot", "zebras have stripes", 4.0),
    ]
    _add(svc, _session(app, "s1", *events))
    texts = _texts(_search(svc, app, "zebra stripes lookup_zebra partially"))
    _expect("zebras have stripes" in texts, f"found {texts!r}")
    _expect("lookup_zebra" not in texts, f"a function call was remembered: {texts!r}")
    _expect("partially" not in texts, f"a partial event was remembered: {texts!r}")


@_check
def methods_are_cold_until_subscribed(svc: BaseMemoryService, app: str) -> None:
    adding = svc.add_session_to_memory(_session(app, "s1", _said("user", "cold tea", 1.0)))
    _expect(_search(svc, app, "cold tea") == [], "adding ran before it was subscribed")
    _add(svc, _session(app, "s0", _said("user", "warm soup", 1.0)))
    adding.pipe(ops.to_list()).run()
    _expect("cold tea" in _texts(_search(svc, app, "cold tea")), "the add did not run")


@_check
def results_run_and_await(svc: BaseMemoryService, app: str) -> None:
    session = _session(app, "s1", _said("user", "hello there", 1.0))
    _expect(svc.add_session_to_memory(session).run() is None, "an add runs to None")

    async def awaited() -> tuple[Any, Any, Any]:
        added = await svc.add_session_to_memory(session)
        found = await svc.search_memory(app_name=app, user_id="u", query="hello")
        gone = await svc.delete_session_memories(app_name=app, user_id="u", session_id="s1")
        return added, found, gone

    added, found, gone = asyncio.run(awaited())
    _expect(added is None and gone is None, f"awaiting Completables gave {added!r}, {gone!r}")
    _expect(isinstance(found, SearchMemoryResponse), f"awaiting a search gave {found!r}")


# -- services that rank ----------------------------------------------------------------------

_FACTS = (
    "My favourite colour is teal",
    "The train to Paris leaves at noon",
    "I play the cello on weekends",
)


@_ranked
def entries_carry_scores_most_similar_first(svc: BaseMemoryService, app: str) -> None:
    events = [_said("user", fact, float(i)) for i, fact in enumerate(_FACTS)]
    _add(svc, _session(app, "s1", *events))
    found = _search(svc, app, "which colour is my favourite")
    scores = [entry.score for entry in found]
    _expect(all(isinstance(score, float) for score in scores), f"scores {scores!r}")
    ordered = [score for score in scores if score is not None]
    _expect(ordered == sorted(ordered, reverse=True), f"scores not descending: {ordered!r}")


@_ranked
def the_closest_memory_comes_first(svc: BaseMemoryService, app: str) -> None:
    for i, fact in enumerate(_FACTS):
        _add(svc, _session(app, f"s{i}", _said("user", fact, float(i))))
    for query, wanted in (
        ("what is my favourite colour", "teal"),
        ("when does the train to Paris leave", "Paris"),
        ("which instrument do I play, the cello?", "cello"),
    ):
        found = _search(svc, app, query)
        _expect(bool(found) and wanted in _text(found[0]), f"{query!r} -> {_texts(found)!r}")


@_ranked
def a_session_added_twice_is_remembered_once(svc: BaseMemoryService, app: str) -> None:
    session = _session(app, "s1", _said("user", "the spare key is under the blue pot", 1.0))
    _add(svc, session)
    _add(svc, session)
    found = _search(svc, app, "where is the spare key")
    hits = [entry for entry in found if re.search(r"spare key", _text(entry))]
    _expect(len(hits) == 1, f"found {len(hits)} copies: {_texts(found)!r}")


MEMORY_SERVICE_CHECKS: tuple[str, ...] = tuple(_BASE)
"""The names of the checks every memory service passes, in order."""

RANKED_MEMORY_CHECKS: tuple[str, ...] = tuple(_RANKED)
"""The names of the checks a ranking memory service passes as well."""
