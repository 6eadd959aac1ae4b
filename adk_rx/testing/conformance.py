"""A conformance suite for session services: what every store must do the same way.

Run it from pytest, one test per check, so a failure names the behaviour::

    @pytest.mark.parametrize("check", SESSION_SERVICE_CHECKS)
    def test_my_store_conforms(check: str) -> None:
        check_session_service(lambda: MyStore(...), checks=[check])

Each check gets a fresh service from the factory, uses an app name of its own (so stores
backed by one database do not see each other's data) and closes the service afterwards.
A failed check raises ``AssertionError`` naming the check and what was expected.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError, SessionExistsError, SessionNotFoundError
from adk_rx.events import Event, EventActions
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import GetSessionConfig, Session
from adk_rx.state import REMOVED

__all__ = ["SESSION_SERVICE_CHECKS", "check_session_service"]

T = TypeVar("T")
_Check = Callable[[BaseSessionService, str], None]
_CHECKS: dict[str, _Check] = {}


def _check(fn: _Check) -> _Check:
    _CHECKS[fn.__name__] = fn
    return fn


def check_session_service(
    make_service: Callable[[], BaseSessionService], *, checks: Iterable[str] | None = None
) -> None:
    """Runs the named checks (all of them by default) against fresh services.

    Args:
        make_service: builds the service under test; called once per check.
        checks: names from :data:`SESSION_SERVICE_CHECKS`.

    Raises:
        AssertionError: a check failed; the message names it.
        KeyError: an unknown check name.
    """
    for name in SESSION_SERVICE_CHECKS if checks is None else list(checks):
        check = _CHECKS[name]
        service = make_service()
        try:
            check(service, f"conformance-{name}-{uuid.uuid4().hex[:8]}")
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc
        finally:
            service.close()


# -- helpers -------------------------------------------------------------------------------


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _value(source: Observable[T]) -> T:
    items = source.pipe(ops.to_list()).run()
    _expect(len(items) == 1, f"expected exactly one item, got {len(items)}")
    return items[0]


def _optional(source: Observable[T]) -> T | None:
    items = source.pipe(ops.to_list()).run()
    _expect(len(items) <= 1, f"expected at most one item, got {len(items)}")
    return items[0] if items else None


def _complete(source: Observable[Any]) -> None:
    items = source.pipe(ops.to_list()).run()
    _expect(items == [], f"expected a Completable, got items {items!r}")


def _raises(error: type[BaseException], source: Observable[Any]) -> BaseException:
    try:
        source.pipe(ops.to_list()).run()
    except error as exc:
        return exc
    raise AssertionError(f"expected {error.__name__}, nothing was raised")


def _get(
    svc: BaseSessionService, session: Session, config: GetSessionConfig | None = None
) -> Session:
    got = _optional(
        svc.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id, config=config
        )
    )
    _expect(got is not None, f"session {session.id} not found")
    assert got is not None  # for the type checker
    return got


def _event(text: str = "hi", *, author: str = "user", **fields: Any) -> Event:
    content = types.Content(
        role="user" if author == "user" else "model", parts=[types.Part(text=text)]
    )
    return Event(author=author, content=content, invocation_id="e-conformance", **fields)


def _delta(**delta: Any) -> EventActions:
    return EventActions(state_delta=delta)


def _texts(session: Session) -> list[str]:
    return [event.text() for event in session.events]


# -- CRUD ----------------------------------------------------------------------------------


@_check
def create_then_get_returns_identity_state_and_no_events(svc: BaseSessionService, app: str) -> None:
    created = _value(svc.create_session(app_name=app, user_id="u", state={"k": 1}, session_id="s"))
    _expect((created.app_name, created.user_id, created.id) == (app, "u", "s"), "identity")
    _expect(created.state == {"k": 1} and created.events == [], f"created: {created.state}")
    got = _get(svc, created)
    _expect((got.app_name, got.user_id, got.id) == (app, "u", "s"), "identity after get")
    _expect(got.state == {"k": 1}, f"state after get: {got.state}")
    _expect(got.events == [], f"events after get: {got.events}")


@_check
def create_without_id_generates_a_fresh_one_and_strips_given_ids(
    svc: BaseSessionService, app: str
) -> None:
    first = _value(svc.create_session(app_name=app, user_id="u"))
    second = _value(svc.create_session(app_name=app, user_id="u", session_id=""))
    _expect(bool(first.id) and bool(second.id) and first.id != second.id, "fresh ids")
    padded = _value(svc.create_session(app_name=app, user_id="u", session_id="  s1 "))
    _expect(padded.id == "s1", f"stripped id: {padded.id!r}")


@_check
def create_with_a_taken_id_raises_session_exists(svc: BaseSessionService, app: str) -> None:
    _value(svc.create_session(app_name=app, user_id="u", session_id="s", state={"k": 1}))
    _raises(SessionExistsError, svc.create_session(app_name=app, user_id="u", session_id="s"))
    # The same id under another user is another session.
    _value(svc.create_session(app_name=app, user_id="other", session_id="s"))


@_check
def get_of_an_unknown_session_is_empty(svc: BaseSessionService, app: str) -> None:
    got = _optional(svc.get_session(app_name=app, user_id="u", session_id="missing"))
    _expect(got is None, f"expected empty, got {got!r}")


@_check
def empty_ids_raise_configuration_error(svc: BaseSessionService, app: str) -> None:
    _raises(ConfigurationError, svc.get_session(app_name="", user_id="u", session_id="s"))
    _raises(ConfigurationError, svc.create_session(app_name=app, user_id=""))
    _raises(ConfigurationError, svc.list_sessions(app_name=app, user_id=""))


@_check
def list_returns_the_users_sessions_with_state_and_without_events(
    svc: BaseSessionService, app: str
) -> None:
    a = _value(svc.create_session(app_name=app, user_id="u", session_id="a", state={"n": 1}))
    _value(svc.create_session(app_name=app, user_id="u", session_id="b"))
    _value(svc.create_session(app_name=app, user_id="other", session_id="c"))
    _value(svc.append_event(a, _event("x", actions=_delta(n=2))))
    listed = _value(svc.list_sessions(app_name=app, user_id="u")).sessions
    _expect(sorted(s.id for s in listed) == ["a", "b"], f"ids: {[s.id for s in listed]}")
    _expect(all(s.events == [] for s in listed), "listed sessions carry no events")
    by_id = {s.id: s for s in listed}
    _expect(by_id["a"].state == {"n": 2}, f"listed state: {by_id['a'].state}")
    nobody = _value(svc.list_sessions(app_name=app, user_id="nobody")).sessions
    _expect(nobody == [], f"unknown user lists {nobody}")


@_check
def delete_removes_the_session_and_its_events(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    _value(svc.append_event(session, _event("one")))
    _complete(svc.delete_session(app_name=app, user_id="u", session_id="s"))
    _expect(
        _optional(svc.get_session(app_name=app, user_id="u", session_id="s")) is None,
        "deleted session still readable",
    )
    again = _value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    _expect(_get(svc, again).events == [], "a re-created session inherited old events")
    _complete(svc.delete_session(app_name=app, user_id="u", session_id="never-existed"))


@_check
def empty_results_run_and_await_to_none(svc: BaseSessionService, app: str) -> None:
    # The README promises ``.run()`` for blocking code and ``await`` for asyncio; a Maybe that
    # found nothing and a Completable give None both ways instead of raising.
    missing = svc.get_session(app_name=app, user_id="u", session_id="missing").run()
    _expect(missing is None, f"get_session(unknown).run() gave {missing!r}")
    _value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    deleted = svc.delete_session(app_name=app, user_id="u", session_id="s").run()
    _expect(deleted is None, f"delete_session(...).run() gave {deleted!r}")

    async def awaited() -> tuple[object, object]:
        return (
            await svc.get_session(app_name=app, user_id="u", session_id="s"),
            await svc.delete_session(app_name=app, user_id="u", session_id="s"),
        )

    _expect(asyncio.run(awaited()) == (None, None), "an empty result did not await to None")


@_check
def methods_are_cold_until_subscribed(svc: BaseSessionService, app: str) -> None:
    create = svc.create_session(app_name=app, user_id="u", session_id="s")
    _expect(
        _optional(svc.get_session(app_name=app, user_id="u", session_id="s")) is None,
        "create_session ran before it was subscribed",
    )
    session = _value(create)
    svc.append_event(session, _event("never"))
    svc.delete_session(app_name=app, user_id="u", session_id="s")
    _expect(_get(svc, session).events == [], "append_event ran before it was subscribed")


# -- events --------------------------------------------------------------------------------


@_check
def appended_events_read_back_in_append_order_and_update_the_view(
    svc: BaseSessionService, app: str
) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u"))
    # Timestamps out of order on purpose: the store orders by append, not by clock.
    for text, ts in (("one", 30.0), ("two", 10.0), ("three", 20.0)):
        stored = _value(svc.append_event(session, _event(text, timestamp=ts)))
        _expect(stored.text() == text, f"append emitted {stored!r}")
    _expect(_texts(session) == ["one", "two", "three"], f"view: {_texts(session)}")
    got = _get(svc, session)
    _expect(_texts(got) == ["one", "two", "three"], f"stored order: {_texts(got)}")
    _expect(got.last_update_time == 20.0, f"last_update_time {got.last_update_time}")


@_check
def events_round_trip_every_field(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u"))
    call = types.FunctionCall(id="c1", name="lookup", args={"q": "x", "n": [1, 2]})
    sent = Event(
        author="agent",
        invocation_id="e-1",
        content=types.Content(
            role="model", parts=[types.Part(text="t"), types.Part(function_call=call)]
        ),
        actions=EventActions(state_delta={"k": {"nested": [1, "two"]}}, transfer_to_agent="b"),
        long_running_tool_ids=frozenset({"c1"}),
        branch="root.child",
        turn_complete=True,
        custom_metadata={"trace": "abc"},
        timestamp=1234.5678,
    )
    _value(svc.append_event(session, sent))
    (got,) = _get(svc, session).events
    _expect(got == sent, f"round trip changed the event:\n{got.to_json()}\n{sent.to_json()}")


@_check
def partial_events_are_emitted_back_but_not_stored(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u"))
    partial = _event("chunk", partial=True, actions=_delta(k=1))
    _expect(_value(svc.append_event(session, partial)) is partial, "partial event not emitted")
    got = _get(svc, session)
    _expect(got.events == [] and "k" not in got.state, f"partial stored: {got.events}")


@_check
def append_to_a_missing_session_raises_session_not_found(svc: BaseSessionService, app: str) -> None:
    ghost = Session(id="ghost", app_name=app, user_id="u")
    _raises(SessionNotFoundError, svc.append_event(ghost, _event()))
    session = _value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    _complete(svc.delete_session(app_name=app, user_id="u", session_id="s"))
    _raises(SessionNotFoundError, svc.append_event(session, _event()))


@_check
def a_view_that_is_behind_still_appends(svc: BaseSessionService, app: str) -> None:
    created = _value(svc.create_session(app_name=app, user_id="u"))
    behind = _get(svc, created)
    _value(svc.append_event(created, _event("first")))
    _value(svc.append_event(created, _event("second")))
    _value(svc.append_event(behind, _event("third")))  # this view never saw first/second
    _expect(_texts(_get(svc, created)) == ["first", "second", "third"], "stale append order")


@_check
def returned_views_do_not_alias_the_store(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u", state={"k": 1}))
    _value(svc.append_event(session, _event("one")))
    view = _get(svc, session)
    view.state["k"] = 99
    view.events.clear()
    again = _get(svc, session)
    _expect(again.state == {"k": 1} and len(again.events) == 1, "a view's edit reached the store")


# -- state scopes --------------------------------------------------------------------------


@_check
def session_keys_are_set_and_removed_by_deltas(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u", state={"a": 0}))
    _value(svc.append_event(session, _event(actions=_delta(a=1, b={"x": 2}))))
    _value(svc.append_event(session, _event(actions=_delta(a=REMOVED))))
    got = _get(svc, session)
    _expect(got.state == {"b": {"x": 2}}, f"state: {got.state}")
    _expect(session.state == got.state, f"view state {session.state} != stored {got.state}")


@_check
def app_keys_are_shared_by_every_session_of_the_app(svc: BaseSessionService, app: str) -> None:
    s1 = _value(svc.create_session(app_name=app, user_id="u1"))
    s2 = _value(svc.create_session(app_name=app, user_id="u2"))
    other = _value(svc.create_session(app_name=f"{app}-other", user_id="u1"))
    _value(svc.append_event(s1, _event(actions=_delta(**{"app:flag": "on"}))))
    _expect(_get(svc, s2).state.get("app:flag") == "on", "app: key not shared across users")
    _expect("app:flag" not in _get(svc, other).state, "app: key leaked into another app")
    _value(svc.append_event(s2, _event(actions=_delta(**{"app:flag": REMOVED}))))
    _expect("app:flag" not in _get(svc, s1).state, "REMOVED did not delete the app: key")


@_check
def user_keys_are_shared_by_the_users_sessions_only(svc: BaseSessionService, app: str) -> None:
    mine = _value(svc.create_session(app_name=app, user_id="u1"))
    also_mine = _value(svc.create_session(app_name=app, user_id="u1"))
    theirs = _value(svc.create_session(app_name=app, user_id="u2"))
    _value(svc.append_event(mine, _event(actions=_delta(**{"user:name": "Ada"}))))
    _expect(_get(svc, also_mine).state.get("user:name") == "Ada", "user: key not shared")
    _expect("user:name" not in _get(svc, theirs).state, "user: key leaked to another user")
    listed = _value(svc.list_sessions(app_name=app, user_id="u1")).sessions
    _expect(all(s.state.get("user:name") == "Ada" for s in listed), "list lacks user: keys")


@_check
def temp_keys_are_never_persisted(svc: BaseSessionService, app: str) -> None:
    session = _value(svc.create_session(app_name=app, user_id="u", state={"temp:seed": 1, "k": 0}))
    _value(svc.append_event(session, _event(actions=_delta(**{"temp:scratch": 2, "k": 1}))))
    got = _get(svc, session)
    _expect(got.state == {"k": 1}, f"temp: keys persisted: {got.state}")
    stored_delta = dict(got.events[-1].actions.state_delta)
    _expect(stored_delta == {"k": 1}, f"temp: keys kept in the stored event: {stored_delta}")


@_check
def create_state_goes_to_its_scopes(svc: BaseSessionService, app: str) -> None:
    state = {"app:a": 1, "user:b": 2, "own": 3, "temp:t": 4}
    _value(svc.create_session(app_name=app, user_id="u", state=state))
    sibling = _value(svc.create_session(app_name=app, user_id="u"))
    _expect(sibling.state == {"app:a": 1, "user:b": 2}, f"sibling state: {sibling.state}")
    stranger = _value(svc.create_session(app_name=app, user_id="v"))
    _expect(stranger.state == {"app:a": 1}, f"another user's state: {stranger.state}")


# -- read filters --------------------------------------------------------------------------


def _three_events(svc: BaseSessionService, app: str) -> Session:
    session = _value(svc.create_session(app_name=app, user_id="u"))
    for text, ts in (("a", 10.0), ("b", 20.0), ("c", 30.0)):
        _value(svc.append_event(session, _event(text, timestamp=ts)))
    return session


@_check
def num_recent_events_keeps_the_newest_n(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    for n, expected in ((2, ["b", "c"]), (1, ["c"]), (0, []), (5, ["a", "b", "c"])):
        got = _texts(_get(svc, session, GetSessionConfig(num_recent_events=n)))
        _expect(got == expected, f"num_recent_events={n}: {got}")


@_check
def after_timestamp_is_inclusive(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    for after, expected in ((20.0, ["b", "c"]), (20.5, ["c"]), (31.0, []), (0.0, ["a", "b", "c"])):
        got = _texts(_get(svc, session, GetSessionConfig(after_timestamp=after)))
        _expect(got == expected, f"after_timestamp={after}: {got}")


@_check
def filters_apply_the_count_before_the_timestamp(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    config = GetSessionConfig(num_recent_events=2, after_timestamp=25.0)
    _expect(_texts(_get(svc, session, config)) == ["c"], "count then timestamp")
    config = GetSessionConfig(num_recent_events=1, after_timestamp=10.0)
    _expect(_texts(_get(svc, session, config)) == ["c"], "count first keeps only the newest")


# -- concurrency ---------------------------------------------------------------------------


@_check
def concurrent_appends_from_threads_are_all_stored_in_order(
    svc: BaseSessionService, app: str
) -> None:
    threads_n, per_thread = 20, 50
    created = _value(svc.create_session(app_name=app, user_id="u"))
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

    def writer(t: int) -> None:
        try:
            view = _get(svc, created)  # each writer has its own, soon stale, view
            start.wait()
            for i in range(per_thread):
                delta = _delta(**{f"user:last{t}": i, f"own{t}": i})
                _value(svc.append_event(view, _event(f"{t}:{i}", author=f"w{t}", actions=delta)))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads_n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    _expect(errors == [], f"appends failed: {errors[:3]!r}")
    got = _get(svc, created)
    _expect(len(got.events) == threads_n * per_thread, f"stored {len(got.events)} events")
    _expect(len({e.id for e in got.events}) == len(got.events), "an event was stored twice")
    for t in range(threads_n):
        mine = [int(e.text().split(":")[1]) for e in got.events if e.author == f"w{t}"]
        _expect(mine == list(range(per_thread)), f"writer {t} order: {mine[:10]}...")
        _expect(got.state.get(f"user:last{t}") == per_thread - 1, f"user:last{t} lost")
        _expect(got.state.get(f"own{t}") == per_thread - 1, f"own{t} lost")
    recent = _get(svc, created, GetSessionConfig(num_recent_events=10)).events
    _expect([e.id for e in recent] == [e.id for e in got.events[-10:]], "recent != tail")


SESSION_SERVICE_CHECKS: tuple[str, ...] = tuple(_CHECKS)
"""The names of every check, in the order :func:`check_session_service` runs them."""
