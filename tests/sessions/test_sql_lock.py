"""Turn locks: one run per session at a time, across threads, services and processes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from reactivex import abc
from reactivex.scheduler import HistoricalScheduler

from adk_rx.sessions.sql import SqlSessionService

# How long to watch for something that must NOT happen (a lock taken twice).
_QUIET = 0.3
# Upper bound for something that must happen; the test normally continues at once.
_BOUND = 20.0


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        yield request.getfixturevalue("fresh_postgres_url")


def _take(svc: SqlSessionService, sid: str = "s") -> abc.DisposableBase:
    return svc.lock_session(app_name="a", user_id="u", session_id=sid).run()


def _take_in_background(svc: SqlSessionService) -> tuple[threading.Event, list[abc.DisposableBase]]:
    got = threading.Event()
    handles: list[abc.DisposableBase] = []

    def on_next(handle: abc.DisposableBase) -> None:
        handles.append(handle)
        got.set()

    svc.lock_session(app_name="a", user_id="u", session_id="s").subscribe(on_next)
    return got, handles


def test_a_second_service_waits_until_the_first_releases(url: str) -> None:
    first, second = SqlSessionService(url), SqlSessionService(url)
    held = _take(first)
    got, handles = _take_in_background(second)
    assert not got.wait(_QUIET), "the lock was taken twice"
    held.dispose()
    assert got.wait(_BOUND)
    handles[0].dispose()
    first.close()
    second.close()


def test_a_second_turn_of_the_same_service_waits_until_the_first_releases(url: str) -> None:
    svc = SqlSessionService(url)
    held = _take(svc)
    got, handles = _take_in_background(svc)
    assert not got.wait(_QUIET), "the lock was taken twice in one process"
    held.dispose()
    assert got.wait(_BOUND)
    handles[0].dispose()
    svc.close()


def test_turns_waiting_in_one_process_take_the_postgresql_lock_in_arrival_order(
    fresh_postgres_url: str,
) -> None:
    svc = SqlSessionService(fresh_postgres_url)
    held = _take(svc)
    order: list[int] = []
    done = threading.Event()

    def waiter(i: int) -> None:
        def on_next(handle: abc.DisposableBase) -> None:
            order.append(i)
            if i == 4:
                done.set()
            handle.dispose()  # hands the turn on to the next waiter

        svc.lock_session(app_name="a", user_id="u", session_id="s").subscribe(on_next)

    for i in range(5):
        waiter(i)
    held.dispose()
    assert done.wait(_BOUND)
    assert order == [0, 1, 2, 3, 4]
    svc.close()


def test_other_sessions_are_not_blocked(url: str) -> None:
    svc = SqlSessionService(url)
    held = _take(svc, "s")
    other = _take(svc, "other")  # returns: a different session's lock is free
    other.dispose()
    held.dispose()
    svc.close()


def test_a_wait_disposed_early_gives_the_lock_back(url: str) -> None:
    svc = SqlSessionService(url)
    held = _take(svc)
    subscription = svc.lock_session(app_name="a", user_id="u", session_id="s").subscribe()
    subscription.dispose()
    held.dispose()
    again = _take(svc)  # would hang if the abandoned wait kept the lock
    again.dispose()
    svc.close()


def _hold_forever(url: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    svc = SqlSessionService(url)
    _take(svc)
    ready.set()
    threading.Event().wait()


def test_a_killed_process_releases_its_lock(url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    child = ctx.Process(target=_hold_forever, args=(url, ready))
    child.start()
    try:
        assert ready.wait(60), "the child never took the lock"
        svc = SqlSessionService(url)
        got, handles = _take_in_background(svc)
        assert not got.wait(_QUIET), "the lock was taken while another process held it"
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        assert got.wait(_BOUND), "the dead process's lock was never released"
        handles[0].dispose()
        svc.close()
    finally:
        child.kill()
        child.join()


def test_a_released_postgresql_lock_is_free_for_others_when_dispose_returns(
    fresh_postgres_url: str,
) -> None:
    # The end of a run disposes its lock, then the server sends the end frame: a client that
    # starts its next turn through another server at once must find the session free. Lock
    # work runs on a scheduler that only runs what it is told to, so nothing left queued
    # behind the dispose could release the lock later.
    queued = HistoricalScheduler()
    first = SqlSessionService(fresh_postgres_url, scheduler=queued)
    second = SqlSessionService(fresh_postgres_url)
    handles: list[abc.DisposableBase] = []
    first.lock_session(app_name="a", user_id="u", session_id="s").subscribe(handles.append)
    queued.start()  # runs what is queued, then stops
    assert len(handles) == 1
    assert second.try_lock_session(app_name="a", user_id="u", session_id="s") is None
    handles[0].dispose()
    other = second.try_lock_session(app_name="a", user_id="u", session_id="s")
    assert other is not None, "the lock was still held after dispose() returned"
    other.dispose()
    first.close()
    second.close()
