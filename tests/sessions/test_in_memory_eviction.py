"""InMemorySessionService: bounded by count (LRU) and idle time; scenario 70 details."""

from __future__ import annotations

import pytest

from adk_rx import ConfigurationError, Event, EventActions, GetSessionConfig, InMemorySessionService
from adk_rx.errors import SessionNotFoundError
from adk_rx.state import REMOVED
from tests.spine_support import collect

APP, USER = "app", "user"


class Clock:
    """A hand-driven clock for ttl_seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def create(svc: InMemorySessionService, sid: str, **kwargs: object) -> None:
    collect(svc.create_session(app_name=APP, user_id=USER, session_id=sid, **kwargs))


def exists(svc: InMemorySessionService, sid: str) -> bool:
    return bool(collect(svc.get_session(app_name=APP, user_id=USER, session_id=sid)))


def ids(svc: InMemorySessionService) -> list[str]:
    return sorted(s.id for s in collect(svc.list_sessions(app_name=APP, user_id=USER))[0].sessions)


def get(svc: InMemorySessionService, sid: str, config: GetSessionConfig | None = None):
    return collect(svc.get_session(app_name=APP, user_id=USER, session_id=sid, config=config))[0]


# -- max_sessions ---------------------------------------------------------------------------


def test_max_sessions_evicts_the_least_recently_created_when_nothing_was_read() -> None:
    svc = InMemorySessionService(max_sessions=2)
    for sid in ("a", "b", "c"):
        create(svc, sid)
    assert ids(svc) == ["b", "c"]


def test_reading_a_session_makes_it_recently_used() -> None:
    svc = InMemorySessionService(max_sessions=2)
    create(svc, "a")
    create(svc, "b")
    assert exists(svc, "a")
    create(svc, "c")
    assert ids(svc) == ["a", "c"]


def test_appending_to_a_session_makes_it_recently_used() -> None:
    svc = InMemorySessionService(max_sessions=2)
    create(svc, "a")
    create(svc, "b")
    collect(svc.append_event(get(svc, "b"), Event(author="user")))
    collect(svc.append_event(get(svc, "a"), Event(author="user")))
    create(svc, "c")
    assert ids(svc) == ["a", "c"]


def test_appending_to_an_evicted_session_raises_session_not_found() -> None:
    svc = InMemorySessionService(max_sessions=1)
    create(svc, "a")
    view = get(svc, "a")
    create(svc, "b")
    with pytest.raises(SessionNotFoundError, match="evicted"):
        collect(svc.append_event(view, Event(author="user")))


# -- ttl_seconds ----------------------------------------------------------------------------


def test_sessions_idle_longer_than_ttl_are_evicted() -> None:
    clock = Clock()
    svc = InMemorySessionService(ttl_seconds=60, clock=clock)
    create(svc, "old")
    clock.now += 30
    create(svc, "young")
    clock.now += 31
    assert ids(svc) == ["young"]
    assert not exists(svc, "old")


def test_reading_a_session_resets_its_idle_time() -> None:
    clock = Clock()
    svc = InMemorySessionService(ttl_seconds=60, clock=clock)
    create(svc, "a")
    clock.now += 50
    assert exists(svc, "a")
    clock.now += 50
    assert exists(svc, "a")
    clock.now += 61
    assert not exists(svc, "a")


@pytest.mark.parametrize("kwargs", [{"max_sessions": 0}, {"ttl_seconds": 0}, {"ttl_seconds": -1}])
def test_non_positive_bounds_are_rejected(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        InMemorySessionService(**kwargs)  # type: ignore[arg-type]


def test_unbounded_service_keeps_every_session() -> None:
    svc = InMemorySessionService()
    for i in range(50):
        create(svc, f"s{i}")
    assert len(ids(svc)) == 50


# -- scenario 70 and scoped state ----------------------------------------------------------


def test_removed_sentinel_in_a_delta_deletes_the_key() -> None:
    svc = InMemorySessionService()
    create(svc, "s", state={"keep": 1, "drop": 2})
    collect(
        svc.append_event(
            get(svc, "s"), Event(author="a", actions=EventActions(state_delta={"drop": REMOVED}))
        )
    )
    assert get(svc, "s").state == {"keep": 1}


def test_recent_events_and_after_timestamp_filters_combine() -> None:
    svc = InMemorySessionService()
    create(svc, "s")
    for ts in (100.0, 200.0, 300.0, 400.0, 500.0):
        collect(svc.append_event(get(svc, "s"), Event(author="a", timestamp=ts)))
    session = get(svc, "s", GetSessionConfig(num_recent_events=4, after_timestamp=300.0))
    assert [e.timestamp for e in session.events] == [300.0, 400.0, 500.0]


def test_deleted_session_is_gone() -> None:
    svc = InMemorySessionService()
    create(svc, "s")
    collect(svc.delete_session(app_name=APP, user_id=USER, session_id="s"))
    assert not exists(svc, "s")
    assert ids(svc) == []


def test_temp_keys_are_neither_stored_in_state_nor_in_stored_events() -> None:
    svc = InMemorySessionService()
    create(svc, "s")
    view = get(svc, "s")
    delta = {"temp:x": 1, "kept": 2}
    collect(svc.append_event(view, Event(author="a", actions=EventActions(state_delta=delta))))
    assert view.state == {"temp:x": 1, "kept": 2}
    fresh = get(svc, "s")
    assert fresh.state == {"kept": 2}
    assert dict(fresh.events[0].actions.state_delta) == {"kept": 2}


def test_app_and_user_keys_are_shared_by_sessions_of_the_app_and_user() -> None:
    svc = InMemorySessionService()
    create(svc, "s1", state={"app:a": 1, "user:u": 2, "own": 3})
    create(svc, "s2")
    collect(svc.create_session(app_name=APP, user_id="other", session_id="s3"))
    assert get(svc, "s2").state == {"app:a": 1, "user:u": 2}
    other = collect(svc.get_session(app_name=APP, user_id="other", session_id="s3"))[0]
    assert other.state == {"app:a": 1}
    elsewhere = collect(svc.create_session(app_name="other_app", user_id=USER))[0]
    assert elsewhere.state == {}
