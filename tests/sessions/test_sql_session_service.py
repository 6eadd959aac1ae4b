"""SqlSessionService beyond the conformance suite: schema, reads, failures, threads."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from google.genai import types
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError, StoreError
from adk_rx.events import Event, EventActions
from adk_rx.sessions.session import GetSessionConfig, Session
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.sessions.sql_engine import Database, normalize_url


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database of each kind (PostgreSQL: a schema of this test's own)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        yield request.getfixturevalue("fresh_postgres_url")


def _event(text: str, **delta: object) -> Event:
    return Event(
        author="user",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta),
    )


def _get(svc: SqlSessionService, session: Session, **config: int | float) -> Session:
    return svc.get_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        config=GetSessionConfig(**config) if config else None,  # type: ignore[arg-type]
    ).run()


def _rows(svc: SqlSessionService, sql: str) -> list[tuple[object, ...]]:
    with svc.database.engine.connect() as conn:
        return [tuple(row) for row in conn.exec_driver_sql(sql)]


def test_plain_postgresql_urls_use_the_psycopg3_driver() -> None:
    assert normalize_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("sqlite:///x.db").drivername == "sqlite"


def test_other_databases_are_rejected() -> None:
    with pytest.raises(ConfigurationError, match="unsupported database"):
        SqlSessionService("mysql://u@h/db")


def test_constructing_the_service_touches_no_file(tmp_path: Path) -> None:
    path = tmp_path / "lazy.db"
    svc = SqlSessionService(f"sqlite:///{path}")
    assert not path.exists()
    svc.create_session(app_name="a", user_id="u").run()
    assert path.exists()
    svc.close()


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    svc = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    svc.create_session(app_name="a", user_id="u").run()
    assert _rows(svc, "PRAGMA journal_mode") == [("wal",)]
    svc.close()


def test_an_in_memory_sqlite_database_is_shared_by_threads() -> None:
    svc = SqlSessionService("sqlite://")
    session = svc.create_session(app_name="a", user_id="u").run()
    svc.append_event(session, _event("hi")).run()  # runs on an I/O thread
    assert [e.text() for e in _get(svc, session).events] == ["hi"]
    svc.close()


def test_the_schema_version_is_recorded(url: str) -> None:
    svc = SqlSessionService(url)
    svc.list_sessions(app_name="a", user_id="u").run()
    assert _rows(svc, "SELECT component, version FROM adk_schema_version") == [("sessions", 1)]
    svc.close()


def test_a_database_from_a_newer_release_is_refused(url: str) -> None:
    svc = SqlSessionService(url)
    svc.list_sessions(app_name="a", user_id="u").run()
    with svc.database.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE adk_schema_version SET version = 99")
    svc.close()
    newer = SqlSessionService(url)
    with pytest.raises(StoreError, match="version 99"):
        newer.list_sessions(app_name="a", user_id="u").run()
    newer.close()


def test_appends_number_events_contiguously_per_session(url: str) -> None:
    svc = SqlSessionService(url)
    one = svc.create_session(app_name="a", user_id="u", session_id="one").run()
    two = svc.create_session(app_name="a", user_id="u", session_id="two").run()
    for i in range(3):
        svc.append_event(one, _event(f"one-{i}")).run()
        svc.append_event(two, _event(f"two-{i}")).run()
    seqs = _rows(svc, "SELECT session_id, seq FROM adk_events ORDER BY session_id, seq")
    assert seqs == [("one", 0), ("one", 1), ("one", 2), ("two", 0), ("two", 1), ("two", 2)]
    svc.close()


def test_recent_events_are_read_without_touching_older_rows(url: str) -> None:
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="a", user_id="u").run()
    for i in range(5):
        svc.append_event(session, _event(f"e{i}")).run()
    # Old rows that are not valid JSON any more: a read that decoded them would fail.
    with svc.database.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE adk_events SET body = 'garbage' WHERE seq < 3")
    fresh = SqlSessionService(url, event_cache_size=0)
    assert [e.text() for e in _get(fresh, session, num_recent_events=2).events] == ["e3", "e4"]
    assert [
        e.text() for e in _get(fresh, session, after_timestamp=session.events[3].timestamp).events
    ] == ["e3", "e4"]
    with pytest.raises(StoreError, match="unreadable"):
        _get(fresh, session)
    fresh.close()
    svc.close()


def test_delete_removes_the_event_rows(url: str) -> None:
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="a", user_id="u").run()
    svc.append_event(session, _event("x")).run()
    svc.delete_session(app_name="a", user_id="u", session_id=session.id).pipe(ops.to_list()).run()
    assert _rows(svc, "SELECT count(*) FROM adk_events") == [(0,)]
    svc.close()


def test_a_state_value_json_cannot_hold_fails_before_writing(url: str) -> None:
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="a", user_id="u").run()
    with pytest.raises(ConfigurationError, match="cannot be stored as JSON"):
        svc.append_event(session, _event("x", **{"user:bad": object()})).run()
    assert _get(svc, session).events == []
    svc.close()


def _break_app_state(svc: SqlSessionService) -> None:
    """Makes the database refuse one app: key, after the event row was already inserted."""
    with svc.database.engine.begin() as conn:
        if svc.database.is_sqlite:
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON adk_app_state WHEN NEW.key = 'app:boom' "
                "BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                "IF NEW.key = 'app:boom' THEN RAISE EXCEPTION 'refused by test trigger'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON adk_app_state "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )


def test_a_failed_append_raises_store_error_and_writes_nothing(url: str) -> None:
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="a", user_id="u", state={"k": 0}).run()
    svc.append_event(session, _event("kept", k=1)).run()
    _break_app_state(svc)
    failing = _event("lost", **{"k": 2, "user:u": 2, "app:ok": 2, "app:boom": 2})
    with pytest.raises(StoreError, match="refused by test trigger") as caught:
        svc.append_event(session, failing).run()
    assert isinstance(caught.value.__cause__, svc.database.engine.dialect.loaded_dbapi.Error)
    after = _get(svc, session)
    assert [e.text() for e in after.events] == ["kept"]
    assert after.state == {"k": 1}
    assert [e.text() for e in session.events] == ["kept"], "the caller's view changed"
    # The sequence did not move: the next event takes the number the failed one would have.
    svc.append_event(session, _event("next")).run()
    assert _rows(svc, "SELECT seq FROM adk_events ORDER BY seq") == [(0,), (1,)]
    svc.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def refusing(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, Callable[[], None], str]]:
    """A database URL, a function after which the database refuses new connections, and
    the driver's words for the refusal (SQLite: its folder is gone; PostgreSQL: the URL's
    role of its own may no longer log in)."""
    if request.param == "sqlite":
        folder = tmp_path / "db"
        folder.mkdir()
        yield f"sqlite:///{folder / 's.db'}", lambda: shutil.rmtree(folder), "unable to open"
        return
    url = request.getfixturevalue("fresh_postgres_url")
    admin = sa.create_engine(normalize_url(url), poolclass=sa.pool.NullPool)
    role = f"adk_rx_test_{uuid.uuid4().hex[:8]}"
    schema = sa.make_url(url).query["options"].removeprefix("-csearch_path=")
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
        conn.exec_driver_sql(f'GRANT ALL ON SCHEMA "{schema}" TO "{role}"')

    def lock_out() -> None:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'ALTER ROLE "{role}" NOLOGIN')

    try:
        scoped = sa.make_url(url).set(username=role).render_as_string(hide_password=False)
        yield scoped, lock_out, "not permitted to log in"
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{role}"')
            conn.exec_driver_sql(f'DROP ROLE "{role}"')
        admin.dispose()


def test_a_connection_the_database_refuses_fails_reads_and_writes_with_store_error(
    refusing: tuple[str, Callable[[], None], str],
) -> None:
    url, refuse, words = refusing
    svc = SqlSessionService(url)
    session = svc.create_session(app_name="a", user_id="u").run()
    svc.database.engine.dispose()  # the next transaction opens a connection of its own
    refuse()
    driver_error = svc.database.engine.dialect.loaded_dbapi.Error
    with pytest.raises(StoreError, match=words) as read:
        _get(svc, session)
    with pytest.raises(StoreError, match=words) as write:
        svc.append_event(session, _event("lost")).run()
    assert isinstance(read.value.__cause__, driver_error)
    assert isinstance(write.value.__cause__, driver_error)
    svc.close()


def test_an_error_in_a_transaction_whose_connection_died_leaves_as_itself(
    fresh_postgres_url: str,
) -> None:
    db = Database(fresh_postgres_url)
    admin = sa.create_engine(normalize_url(fresh_postgres_url), poolclass=sa.pool.NullPool)
    with pytest.raises(LookupError, match="the caller's own"), db.read("reading") as tx:
        [(pid,)] = tx.execute(sa.select(sa.func.pg_backend_pid())).fetchall()
        with admin.connect() as conn:  # waits until the backend is gone
            assert conn.execute(sa.select(sa.func.pg_terminate_backend(pid, 10_000))).scalar()
        raise LookupError("the caller's own error")  # its rollback fails on the dead connection
    with db.read("reading again") as tx:
        assert tx.execute(sa.select(sa.literal(1))).fetchall() == [(1,)]
    db.dispose()
    admin.dispose()


def test_database_work_runs_off_the_subscribing_thread(tmp_path: Path) -> None:
    svc = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    threads: set[int] = set()
    sa.event.listen(
        svc.database.engine,
        "before_cursor_execute",
        lambda *_: threads.add(threading.get_ident()),
    )
    session = svc.create_session(app_name="a", user_id="u").run()
    svc.append_event(session, _event("x")).run()
    assert threads and threading.get_ident() not in threads
    svc.close()


def test_two_services_on_one_database_append_to_one_session(url: str) -> None:
    first, second = SqlSessionService(url), SqlSessionService(url)
    session = first.create_session(app_name="a", user_id="u").run()
    view = _get(second, session)

    def write(svc: SqlSessionService, view: Session, name: str) -> None:
        for i in range(25):
            svc.append_event(view, _event(f"{name}{i}")).run()

    workers = [
        threading.Thread(target=write, args=(first, session, "a")),
        threading.Thread(target=write, args=(second, view, "b")),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    texts = [e.text() for e in _get(first, session).events]
    assert [t for t in texts if t[0] == "a"] == [f"a{i}" for i in range(25)]
    assert [t for t in texts if t[0] == "b"] == [f"b{i}" for i in range(25)]
    assert _rows(first, "SELECT min(seq), max(seq), count(*) FROM adk_events") == [(0, 49, 50)]
    first.close()
    second.close()


def test_a_session_recreated_elsewhere_is_not_served_from_the_cache(url: str) -> None:
    here, elsewhere = SqlSessionService(url), SqlSessionService(url)
    session = here.create_session(app_name="a", user_id="u", session_id="s").run()
    for text in ("old-1", "old-2", "old-3"):
        here.append_event(session, _event(text)).run()
    assert [e.text() for e in _get(here, session).events] == ["old-1", "old-2", "old-3"]
    elsewhere.delete_session(app_name="a", user_id="u", session_id="s").pipe(ops.to_list()).run()
    fresh = elsewhere.create_session(app_name="a", user_id="u", session_id="s").run()
    for text in ("new-1", "new-2", "new-3", "new-4"):
        elsewhere.append_event(fresh, _event(text)).run()
    assert [e.text() for e in _get(here, session).events] == ["new-1", "new-2", "new-3", "new-4"]
    here.close()
    elsewhere.close()


def test_reads_stay_whole_when_the_cache_is_smaller_than_a_history(url: str) -> None:
    svc = SqlSessionService(url, event_cache_size=3)
    one = svc.create_session(app_name="a", user_id="u").run()
    two = svc.create_session(app_name="a", user_id="u").run()
    for i in range(5):
        svc.append_event(one, _event(f"one-{i}")).run()
        assert [e.text() for e in _get(svc, one).events] == [f"one-{j}" for j in range(i + 1)]
        svc.append_event(two, _event(f"two-{i}")).run()
        assert [e.text() for e in _get(svc, two).events] == [f"two-{j}" for j in range(i + 1)]
    svc.close()
