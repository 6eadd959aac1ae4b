"""The SQL store under a Runner: several writers, threads, processes, crashes and failures."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from google.genai import types
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, Runner
from adk_rx.errors import StoreBusyError, StoreError
from adk_rx.events import Event
from adk_rx.models import LlmResponse
from adk_rx.rx import from_async, runtime_loop
from adk_rx.sessions.session import Session
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.sessions.sql_engine import normalize_url
from adk_rx.testing import ScriptedLlm

_SPAWN = multiprocessing.get_context("spawn")
_BOUND = 120.0  # upper bound for a child process; the test continues as soon as it is done


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        yield request.getfixturevalue("fresh_postgres_url")


def _runner(svc: SqlSessionService, script: list[Any]) -> Runner:
    return Runner(
        app_name="app", agent=LlmAgent(name="bot", model=ScriptedLlm(script)), session_service=svc
    )


def _turn(runner: Runner, session_id: str, text: str) -> list[Event]:
    return list(runner.run(user_id="u", session_id=session_id, new_message=text))


def _history(svc: SqlSessionService, session_id: str) -> Session:
    return svc.get_session(app_name="app", user_id="u", session_id=session_id).run()


def _assert_turns_paired(events: list[Event], writers: dict[str, int]) -> None:
    """Every user message is followed by its reply; each writer's turns are in order."""
    texts = [(e.author, e.text()) for e in events]
    assert len(texts) == 2 * sum(writers.values()), texts
    for user, reply in zip(texts[::2], texts[1::2], strict=True):
        assert user[0] == "user" and reply[0] == "bot", (user, reply)
        assert reply[1] == f"reply to {user[1]}", (user, reply)
    for name, turns in writers.items():
        mine = [text for author, text in texts if author == "user" and text.startswith(name)]
        assert mine == [f"{name} {i}" for i in range(turns)]


def _echo(request: Any) -> str:
    last = request.contents[-1]
    return f"reply to {''.join(p.text or '' for p in last.parts)}"


# -- processes -----------------------------------------------------------------------------


def _writer_process(url: str, session_id: str, name: str, turns: int, go: Any) -> None:
    svc = SqlSessionService(url)
    runner = _runner(svc, [_echo] * turns)
    go.wait()
    for i in range(turns):
        _turn(runner, session_id, f"{name} {i}")  # the Runner holds the turn lock
    svc.close()


def _run_writers(url: str, session_id: str) -> None:
    go = _SPAWN.Barrier(2)  # both children start their turns together
    children = [
        _SPAWN.Process(target=_writer_process, args=(url, session_id, name, 10, go))
        for name in ("p1", "p2")
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(_BOUND)
    assert [child.exitcode for child in children] == [0, 0]


def test_two_processes_taking_turns_on_one_session_keep_every_turn_whole(url: str) -> None:
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="app", user_id="u").run()
    _run_writers(url, session.id)  # each child's view goes stale between its turns: no error
    _assert_turns_paired(_history(svc, session.id).events, {"p1": 10, "p2": 10})
    svc.close()


# -- threads -------------------------------------------------------------------------------


def _concurrently(jobs: list[Any]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(len(jobs))

    def run(job: Any) -> None:
        start.wait()
        try:
            job()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_twenty_concurrent_turns_through_one_runner_all_succeed(url: str) -> None:
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    runner = _runner(svc, [_echo] * 20)
    errors = _concurrently([lambda i=i: _turn(runner, sid, f"t{i:02d} 0") for i in range(20)])
    assert errors == []
    _assert_turns_paired(_history(svc, sid).events, {f"t{i:02d}": 1 for i in range(20)})
    svc.close()


def test_twenty_concurrent_turns_through_two_runners_on_two_services_all_succeed(url: str) -> None:
    services = [SqlSessionService(url), SqlSessionService(url)]
    sid = services[0].create_session(app_name="app", user_id="u").run().id
    runners = [_runner(svc, [_echo] * 10) for svc in services]

    def turn(i: int) -> None:
        _turn(runners[i % 2], sid, f"t{i:02d} 0")

    assert _concurrently([lambda i=i: turn(i) for i in range(20)]) == []
    _assert_turns_paired(_history(services[0], sid).events, {f"t{i:02d}": 1 for i in range(20)})
    for svc in services:
        svc.close()


# -- crashes and failures ------------------------------------------------------------------


def _turn_that_hangs(url: str, session_id: str, in_model: Any) -> None:
    svc = SqlSessionService(url)

    def hang(_: Any) -> str:
        in_model.set()
        threading.Event().wait()  # until the parent kills this process
        return "never"

    _turn(_runner(svc, [hang]), session_id, "before the crash")


def test_a_process_killed_mid_turn_leaves_a_session_whose_next_turn_works(url: str) -> None:
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    in_model = _SPAWN.Event()
    child = _SPAWN.Process(target=_turn_that_hangs, args=(url, sid, in_model))
    child.start()
    try:
        assert in_model.wait(_BOUND), "the child never reached the model"
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(_BOUND)
    finally:
        child.kill()
    assert [e.text() for e in _history(svc, sid).events] == ["before the crash"]
    # The dead process's turn lock is gone too, or this turn would wait for it.
    replies = _turn(_runner(svc, ["fine again"]), sid, "after the crash")
    assert [e.text() for e in replies] == ["fine again"]
    texts = [e.text() for e in _history(svc, sid).events]
    assert texts == ["before the crash", "after the crash", "fine again"]
    svc.close()


def _refuse_app_key(svc: SqlSessionService, key: str) -> None:
    with svc.database.engine.begin() as conn:
        if svc.database.is_sqlite:
            conn.exec_driver_sql(
                f"CREATE TRIGGER refuse BEFORE INSERT ON adk_app_state WHEN NEW.key = '{key}' "
                "BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.key = '{key}' THEN RAISE EXCEPTION 'refused by test trigger'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON adk_app_state "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )


def test_a_store_failing_mid_append_errors_the_run_and_keeps_nothing_of_that_event(
    url: str,
) -> None:
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    svc.list_sessions(app_name="app", user_id="u").run()  # tables exist before the trigger
    _refuse_app_key(svc, "app:answer")
    agent = LlmAgent(name="bot", model=ScriptedLlm(["42"]), output_key="app:answer")
    runner = Runner(app_name="app", agent=agent, session_service=svc)
    with pytest.raises(StoreError, match="refused by test trigger"):
        _turn(runner, sid, "question")
    stored = _history(svc, sid)
    # The reply's row, its seq and its state change were all rolled back together.
    assert [e.text() for e in stored.events if e.text()] == ["question"]
    assert "app:answer" not in stored.state
    retry = Runner(
        app_name="app", agent=LlmAgent(name="bot", model=ScriptedLlm(["ok"])), session_service=svc
    )
    assert [e.text() for e in _turn(retry, sid, "again")] == ["ok"]
    svc.close()


def test_the_user_message_content_round_trips_through_the_store(url: str) -> None:
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    message = types.Content(
        role="user", parts=[types.Part(text="hello"), types.Part(text=" there")]
    )
    list(_runner(svc, ["hi"]).run(user_id="u", session_id=sid, new_message=message))
    assert _history(svc, sid).events[0].content == message
    svc.close()


# -- many runs, few connections (PostgreSQL) ------------------------------------------------


class _Gathering(BaseLlm):
    """Holds every call until ``expected`` calls wait at once and the test releases them."""

    def __init__(self, expected: int) -> None:
        super().__init__(model="gathering")
        self.expected = expected
        self.arrived = 0
        self.all_in = threading.Event()
        self.release = asyncio.Event()

    def generate_content(self, llm_request: Any, stream: bool = False) -> Observable[LlmResponse]:
        async def reply() -> LlmResponse:
            self.arrived += 1  # on the runtime loop: one thread
            if self.arrived == self.expected:
                self.all_in.set()
            await self.release.wait()
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))

        return from_async(reply)


def _named(url: str, name: str) -> str:
    """``url`` whose connections show up as ``name`` in pg_stat_activity."""
    parsed = sa.make_url(url).update_query_dict({"application_name": name})
    return parsed.render_as_string(hide_password=False)


def _connections(url: str, name: str) -> int:
    engine = sa.create_engine(normalize_url(url), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        count = conn.execute(
            sa.text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :n"),
            {"n": name},
        ).scalar_one()
    engine.dispose()
    return int(count)


def test_150_concurrent_runs_on_postgresql_share_a_bounded_set_of_connections(
    fresh_postgres_url: str,
) -> None:
    runs = 150
    name = f"adk_rx_test_{uuid.uuid4().hex[:8]}"
    url = _named(fresh_postgres_url, name)
    svc = SqlSessionService(url, pool_size=5, max_overflow=5)
    model = _Gathering(runs)
    runner = Runner(app_name="app", agent=LlmAgent(name="bot", model=model), session_service=svc)
    sids = [svc.create_session(app_name="app", user_id="u").run().id for _ in range(runs)]
    errors: list[Exception] = []
    finished = threading.Semaphore(0)

    def fail(error: Exception) -> None:
        errors.append(error)
        finished.release()

    for sid in sids:
        runner.run_async(user_id="u", session_id=sid, new_message="hi").subscribe(
            on_error=fail, on_completed=finished.release
        )
    # Every run holds its turn lock while it waits in the model.
    assert model.all_in.wait(_BOUND) or errors, f"{model.arrived} of {runs} runs reached the model"
    open_now = _connections(fresh_postgres_url, name)
    runtime_loop().call_soon_threadsafe(model.release.set)
    for _ in range(runs):
        assert finished.acquire(timeout=_BOUND)
    assert errors == []
    assert open_now <= 5 + 5 + 1  # the pool, bounded, and one connection for every turn lock
    replies = [_history(svc, sid).events[-1].text() for sid in sids]
    assert replies == ["ok"] * runs
    svc.close()


def test_an_exhausted_pool_fails_a_read_with_store_busy_after_the_pool_timeout(
    fresh_postgres_url: str,
) -> None:
    svc = SqlSessionService(fresh_postgres_url, pool_size=1, max_overflow=0, pool_timeout=0.2)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    with (
        svc.database.engine.connect(),  # the only connection, taken
        pytest.raises(StoreBusyError, match="no database connection available"),
    ):
        _history(svc, sid)
    assert _history(svc, sid).id == sid
    svc.close()


# -- connections the database dropped --------------------------------------------------------


def _drop_connections(url: str, name: str) -> int:
    engine = sa.create_engine(normalize_url(url), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        dropped = conn.execute(
            sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = :n AND pid <> pg_backend_pid()"
            ),
            {"n": name},
        ).scalar_one()
    engine.dispose()
    return int(dropped)


def test_after_the_database_drops_every_connection_the_next_read_and_run_work(
    fresh_postgres_url: str,
) -> None:
    name = f"adk_rx_test_{uuid.uuid4().hex[:8]}"
    url = _named(fresh_postgres_url, name)
    svc = SqlSessionService(url)
    sid = svc.create_session(app_name="app", user_id="u").run().id
    assert [e.text() for e in _turn(_runner(svc, ["one"]), sid, "first")] == ["one"]
    assert _drop_connections(fresh_postgres_url, name) >= 2  # the pool's and the turn lock's

    assert [e.text() for e in _history(svc, sid).events] == ["first", "one"]
    assert [e.text() for e in _turn(_runner(svc, ["two"]), sid, "second")] == ["two"]
    assert _drop_connections(fresh_postgres_url, name) >= 1
    assert [e.text() for e in _turn(_runner(svc, ["three"]), sid, "third")] == ["three"]
    svc.close()
