"""Checks of state scopes (session, ``app:``, ``user:``, ``temp:``) and of read filters."""

from __future__ import annotations

from adk_rx.errors import StateValueError
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import GetSessionConfig, Session
from adk_rx.state import MAX_SHARED_KEY_LENGTH, REMOVED
from adk_rx.testing.conformance.support import (
    check,
    delta,
    event,
    expect,
    get,
    optional,
    raises,
    texts,
    value,
)


@check
def session_keys_are_set_and_removed_by_deltas(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u", state={"a": 0}))
    value(svc.append_event(session, event(actions=delta(a=1, b={"x": 2}))))
    value(svc.append_event(session, event(actions=delta(a=REMOVED))))
    got = get(svc, session)
    expect(got.state == {"b": {"x": 2}}, f"state: {got.state}")
    expect(session.state == got.state, f"view state {session.state} != stored {got.state}")


@check
def app_keys_are_shared_by_every_session_of_the_app(svc: BaseSessionService, app: str) -> None:
    s1 = value(svc.create_session(app_name=app, user_id="u1"))
    s2 = value(svc.create_session(app_name=app, user_id="u2"))
    other = value(svc.create_session(app_name=f"{app}-other", user_id="u1"))
    value(svc.append_event(s1, event(actions=delta(**{"app:flag": "on"}))))
    expect(get(svc, s2).state.get("app:flag") == "on", "app: key not shared across users")
    expect("app:flag" not in get(svc, other).state, "app: key leaked into another app")
    value(svc.append_event(s2, event(actions=delta(**{"app:flag": REMOVED}))))
    expect("app:flag" not in get(svc, s1).state, "REMOVED did not delete the app: key")


@check
def user_keys_are_shared_by_the_users_sessions_only(svc: BaseSessionService, app: str) -> None:
    mine = value(svc.create_session(app_name=app, user_id="u1"))
    also_mine = value(svc.create_session(app_name=app, user_id="u1"))
    theirs = value(svc.create_session(app_name=app, user_id="u2"))
    value(svc.append_event(mine, event(actions=delta(**{"user:name": "Ada"}))))
    expect(get(svc, also_mine).state.get("user:name") == "Ada", "user: key not shared")
    expect("user:name" not in get(svc, theirs).state, "user: key leaked to another user")
    listed = value(svc.list_sessions(app_name=app, user_id="u1")).sessions
    expect(all(s.state.get("user:name") == "Ada" for s in listed), "list lacks user: keys")


@check
def temp_keys_are_never_persisted(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u", state={"temp:seed": 1, "k": 0}))
    value(svc.append_event(session, event(actions=delta(**{"temp:scratch": 2, "k": 1}))))
    got = get(svc, session)
    expect(got.state == {"k": 1}, f"temp: keys persisted: {got.state}")
    stored_delta = dict(got.events[-1].actions.state_delta)
    expect(stored_delta == {"k": 1}, f"temp: keys kept in the stored event: {stored_delta}")


@check
def create_state_goes_to_its_scopes(svc: BaseSessionService, app: str) -> None:
    state = {"app:a": 1, "user:b": 2, "own": 3, "temp:t": 4}
    value(svc.create_session(app_name=app, user_id="u", state=state))
    sibling = value(svc.create_session(app_name=app, user_id="u"))
    expect(sibling.state == {"app:a": 1, "user:b": 2}, f"sibling state: {sibling.state}")
    stranger = value(svc.create_session(app_name=app, user_id="v"))
    expect(stranger.state == {"app:a": 1}, f"another user's state: {stranger.state}")


@check
def shared_keys_no_store_can_keep_are_refused_before_anything_is_written(
    svc: BaseSessionService, app: str
) -> None:
    session = value(svc.create_session(app_name=app, user_id="u"))
    longest = "user:" + "k" * (MAX_SHARED_KEY_LENGTH - len("user:"))
    for bad in ("user:a\x00b", "app:a\x00b", longest + "k"):
        actions = delta(**{"own": 1, "user:fine": 2, bad: 3})
        raises(StateValueError, svc.append_event(session, event(actions=actions)))
        raises(
            StateValueError,
            svc.create_session(app_name=app, user_id="u", state={bad: 1}, session_id="refused"),
        )
    got = get(svc, session)
    expect(got.events == [] and got.state == {}, f"a refused delta left {got.state}, {got.events}")
    expect(session.state == {}, f"a refused append changed the view: {session.state}")
    refused = optional(svc.get_session(app_name=app, user_id="u", session_id="refused"))
    expect(refused is None, "a refused create_session stored the session")
    # What every store can keep: the longest shared key, and NUL in a session key.
    value(svc.append_event(session, event(actions=delta(**{longest: 1, "a\x00b": 2}))))
    got = get(svc, session).state
    expect(got == {longest: 1, "a\x00b": 2}, f"kept keys read back as {sorted(got)}")


# -- read filters --------------------------------------------------------------------------


def _three_events(svc: BaseSessionService, app: str) -> Session:
    session = value(svc.create_session(app_name=app, user_id="u"))
    for text, ts in (("a", 10.0), ("b", 20.0), ("c", 30.0)):
        value(svc.append_event(session, event(text, timestamp=ts)))
    return session


@check
def num_recent_events_keeps_the_newest_n(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    for n, expected in ((2, ["b", "c"]), (1, ["c"]), (0, []), (5, ["a", "b", "c"])):
        got = texts(get(svc, session, GetSessionConfig(num_recent_events=n)))
        expect(got == expected, f"num_recent_events={n}: {got}")


@check
def after_timestamp_is_inclusive(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    for after, expected in ((20.0, ["b", "c"]), (20.5, ["c"]), (31.0, []), (0.0, ["a", "b", "c"])):
        got = texts(get(svc, session, GetSessionConfig(after_timestamp=after)))
        expect(got == expected, f"after_timestamp={after}: {got}")


@check
def filters_apply_the_count_before_the_timestamp(svc: BaseSessionService, app: str) -> None:
    session = _three_events(svc, app)
    config = GetSessionConfig(num_recent_events=2, after_timestamp=25.0)
    expect(texts(get(svc, session, config)) == ["c"], "count then timestamp")
    config = GetSessionConfig(num_recent_events=1, after_timestamp=10.0)
    expect(texts(get(svc, session, config)) == ["c"], "count first keeps only the newest")
