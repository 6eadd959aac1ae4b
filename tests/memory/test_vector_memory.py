"""VectorMemoryService beyond the conformance suite: incremental adds, one embedder per store,
the SQLite index's life cycle, the Runner's cascade, limits and cancellation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.memory import HashingEmbedder, VectorMemoryService
from adk_rx.memory.embedder import Vector
from adk_rx.memory.vector_sqlite import sqlite_vec_driver
from adk_rx.sessions import Session
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.testing import ScriptedLlm

needs_sqlite_vec = pytest.mark.skipif(
    sqlite_vec_driver() is None, reason='sqlite-vec cannot be loaded: pip install "adk_rx[vector]"'
)


class Counting(HashingEmbedder):
    """A hashing embedder that records what it was asked to embed."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        self.embedded.extend(texts)
        return super().embed(texts, is_query=is_query)


def _said(author: str, text: str, timestamp: float) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=timestamp)


def _turns(count: int, sid: str = "s1") -> Session:
    events = [
        _said(author, f"turn {i} fact{i} {author}", float(i))
        for i in range(count)
        for author in ("user", "bot")
    ]
    return Session(id=sid, app_name="app", user_id="u", events=events)


def _add(memory: VectorMemoryService, session: Session) -> None:
    memory.add_session_to_memory(session).pipe(ops.to_list()).run()


def _texts(memory: VectorMemoryService, query: str) -> list[str]:
    found = memory.search_memory(app_name="app", user_id="u", query=query).run()
    return [p.text or "" for m in found.memories for p in m.content.parts or []]


def test_adding_a_session_again_embeds_only_its_new_turns() -> None:
    embedder = Counting()
    memory = VectorMemoryService("memory://", embedder)
    _add(memory, _turns(2))
    _add(memory, _turns(3))
    _add(memory, _turns(3))

    assert embedder.embedded == [
        "user: turn 0 fact0 user\nbot: turn 0 fact0 bot",
        "user: turn 1 fact1 user\nbot: turn 1 fact1 bot",
        "user: turn 2 fact2 user\nbot: turn 2 fact2 bot",
    ]
    assert len(_texts(memory, "turn")) == 3


def test_a_store_keeps_one_embedder_and_refuses_another_without_losing_data(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    first = VectorMemoryService(url, HashingEmbedder())
    _add(first, _turns(1))
    first.close()

    other = VectorMemoryService(url, HashingEmbedder(dim=512))
    with pytest.raises(ConfigurationError, match=r"holds vectors of 'hashing-256'.*'hashing-512'"):
        _texts(other, "fact0")
    other.close()
    again = VectorMemoryService(url, HashingEmbedder())
    assert _texts(again, "fact0") == ["user: turn 0 fact0 user\nbot: turn 0 fact0 bot"]
    again.close()


def _knn_rows(path: Path) -> int:
    # Through the store's own SQLite library: two copies of SQLite must not share a file.
    engine = sa.create_engine(f"sqlite:///{path}", module=sqlite_vec_driver())
    with engine.connect() as conn:
        names = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master")}
        count = 0
        if "adk_vector_knn_rowids" in names:  # sqlite-vec's own table of the vec0 rows
            count = conn.exec_driver_sql("SELECT count(*) FROM adk_vector_knn_rowids").scalar()
    engine.dispose()
    return int(count or 0)


@needs_sqlite_vec
def test_a_user_who_outgrows_the_exact_scan_moves_to_the_binary_index(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    memory = VectorMemoryService(f"sqlite:///{path}", HashingEmbedder(), exact_up_to=3)
    _add(memory, _turns(3))
    assert _knn_rows(path) == 0
    _add(memory, _turns(5))
    assert _knn_rows(path) == 5
    assert _texts(memory, "fact4")[0].startswith("user: turn 4")
    _add(memory, _turns(4))  # the fifth turn forgotten: out of the index too
    assert _knn_rows(path) == 4
    memory.delete_session_memories(app_name="app", user_id="u", session_id="s1").run()
    assert _knn_rows(path) == 0 and _texts(memory, "fact4") == []
    memory.close()


@needs_sqlite_vec
def test_a_store_made_without_the_index_gets_one_and_the_reverse_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    plain = VectorMemoryService(f"sqlite:///{path}", HashingEmbedder(), use_index=False)
    _add(plain, _turns(5))
    assert plain.store.method == "exact"
    plain.close()

    indexed = VectorMemoryService(f"sqlite:///{path}", HashingEmbedder(), exact_up_to=3)
    assert indexed.store.method == "sqlite-vec" and _knn_rows(path) == 5
    assert _texts(indexed, "fact2")[0].startswith("user: turn 2")
    indexed.close()

    without = VectorMemoryService(f"sqlite:///{path}", HashingEmbedder(), use_index=False)
    with pytest.raises(ConfigurationError, match="indexed with sqlite-vec"):
        _texts(without, "fact2")
    without.close()


def test_runner_delete_session_forgets_the_sessions_memories() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder())
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="assistant", model=ScriptedLlm([])),
        session_service=InMemorySessionService(),
        memory_service=memory,
    )
    for sid in ("s1", "s2"):
        runner.session_service.create_session(app_name="app", user_id="u", session_id=sid).run()
        _add(memory, _turns(1, sid=sid))

    runner.delete_session(user_id="u", session_id="s1").pipe(ops.to_list()).run()

    found = memory.search_memory(app_name="app", user_id="u", query="fact0").run()
    assert len(found.memories) == 1  # s2's turn only


def test_top_k_and_min_score_bound_the_results() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder(), top_k=2, min_score=0.2)
    _add(memory, _turns(4))

    assert len(_texts(memory, "turn user bot")) == 2
    assert _texts(memory, "fact3") == ["user: turn 3 fact3 user\nbot: turn 3 fact3 bot"]
    assert _texts(memory, "zebra") == []


def test_an_empty_query_finds_nothing_without_embedding() -> None:
    embedder = Counting()
    memory = VectorMemoryService("memory://", embedder)
    _add(memory, _turns(1))

    assert _texts(memory, "  ") == [] and len(embedder.embedded) == 1


def test_disposing_an_add_while_it_embeds_writes_nothing() -> None:
    pending: Subject[list[Vector]] = Subject()

    class Slow(HashingEmbedder):
        def embed(
            self, texts: Sequence[str], *, is_query: bool = False
        ) -> Observable[list[Vector]]:
            return pending if not is_query else super().embed(texts, is_query=is_query)

    memory = VectorMemoryService("memory://", Slow())
    done: list[object] = []
    subscription = memory.add_session_to_memory(_turns(1)).subscribe(
        on_completed=lambda: done.append("completed"), on_error=done.append
    )
    # The embedding waits; disposing unsubscribes from it, so its late answer is not written.
    subscription.dispose()
    pending.on_next([HashingEmbedder().vector("x")])

    assert done == [] and not pending.observers
    assert _texts(memory, "fact0") == []


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"top_k": 0}, "top_k"),
        ({"max_chunk_chars": 10}, "max_chunk_chars"),
        ({"embedder": object()}, "must be an Embedder"),
    ],
)
def test_bad_settings_are_refused(options: dict[str, object], error: str) -> None:
    arguments: dict[str, object] = {"embedder": HashingEmbedder(), **options}
    with pytest.raises(ConfigurationError, match=error):
        VectorMemoryService("memory://", **arguments)  # type: ignore[arg-type]


@pytest.mark.skipif(
    getattr(sqlite_vec_driver(), "__name__", "sqlite3") == "sqlite3",
    reason="this Python's sqlite3 loads sqlite-vec itself: no second SQLite library is used",
)
def test_a_file_open_through_one_sqlite_library_is_not_opened_through_another(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    sessions = SqlSessionService(url)
    try:
        with pytest.raises(ConfigurationError, match="could corrupt it: use another database"):
            VectorMemoryService(url, HashingEmbedder())
    finally:
        sessions.close()
    VectorMemoryService(url, HashingEmbedder()).close()  # once the sessions let go, it may


def test_a_url_that_is_no_database_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unsupported database"):
        VectorMemoryService("mongodb://localhost/memory", HashingEmbedder())
