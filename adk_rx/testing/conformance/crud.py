"""Checks of creating, reading, listing and deleting sessions."""

from __future__ import annotations

import asyncio

from adk_rx.errors import ConfigurationError, SessionExistsError
from adk_rx.sessions.base import BaseSessionService
from adk_rx.testing.conformance.support import (
    check,
    complete,
    delta,
    event,
    expect,
    get,
    optional,
    raises,
    value,
)


@check
def create_then_get_returns_identity_state_and_no_events(svc: BaseSessionService, app: str) -> None:
    created = value(svc.create_session(app_name=app, user_id="u", state={"k": 1}, session_id="s"))
    expect((created.app_name, created.user_id, created.id) == (app, "u", "s"), "identity")
    expect(created.state == {"k": 1} and created.events == [], f"created: {created.state}")
    got = get(svc, created)
    expect((got.app_name, got.user_id, got.id) == (app, "u", "s"), "identity after get")
    expect(got.state == {"k": 1}, f"state after get: {got.state}")
    expect(got.events == [], f"events after get: {got.events}")


@check
def create_without_id_generates_a_fresh_one_and_strips_given_ids(
    svc: BaseSessionService, app: str
) -> None:
    first = value(svc.create_session(app_name=app, user_id="u"))
    second = value(svc.create_session(app_name=app, user_id="u", session_id=""))
    expect(bool(first.id) and bool(second.id) and first.id != second.id, "fresh ids")
    padded = value(svc.create_session(app_name=app, user_id="u", session_id="  s1 "))
    expect(padded.id == "s1", f"stripped id: {padded.id!r}")


@check
def create_with_a_taken_id_raises_session_exists(svc: BaseSessionService, app: str) -> None:
    value(svc.create_session(app_name=app, user_id="u", session_id="s", state={"k": 1}))
    raises(SessionExistsError, svc.create_session(app_name=app, user_id="u", session_id="s"))
    # The same id under another user is another session.
    value(svc.create_session(app_name=app, user_id="other", session_id="s"))


@check
def get_of_an_unknown_session_is_empty(svc: BaseSessionService, app: str) -> None:
    got = optional(svc.get_session(app_name=app, user_id="u", session_id="missing"))
    expect(got is None, f"expected empty, got {got!r}")


@check
def empty_ids_raise_configuration_error(svc: BaseSessionService, app: str) -> None:
    raises(ConfigurationError, svc.get_session(app_name="", user_id="u", session_id="s"))
    raises(ConfigurationError, svc.create_session(app_name=app, user_id=""))
    raises(ConfigurationError, svc.list_sessions(app_name=app, user_id=""))


@check
def list_returns_the_users_sessions_with_state_and_without_events(
    svc: BaseSessionService, app: str
) -> None:
    a = value(svc.create_session(app_name=app, user_id="u", session_id="a", state={"n": 1}))
    value(svc.create_session(app_name=app, user_id="u", session_id="b"))
    value(svc.create_session(app_name=app, user_id="other", session_id="c"))
    value(svc.append_event(a, event("x", actions=delta(n=2))))
    listed = value(svc.list_sessions(app_name=app, user_id="u")).sessions
    expect(sorted(s.id for s in listed) == ["a", "b"], f"ids: {[s.id for s in listed]}")
    expect(all(s.events == [] for s in listed), "listed sessions carry no events")
    by_id = {s.id: s for s in listed}
    expect(by_id["a"].state == {"n": 2}, f"listed state: {by_id['a'].state}")
    nobody = value(svc.list_sessions(app_name=app, user_id="nobody")).sessions
    expect(nobody == [], f"unknown user lists {nobody}")


@check
def delete_removes_the_session_and_its_events(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    value(svc.append_event(session, event("one")))
    complete(svc.delete_session(app_name=app, user_id="u", session_id="s"))
    expect(
        optional(svc.get_session(app_name=app, user_id="u", session_id="s")) is None,
        "deleted session still readable",
    )
    again = value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    expect(get(svc, again).events == [], "a re-created session inherited old events")
    complete(svc.delete_session(app_name=app, user_id="u", session_id="never-existed"))


@check
def empty_results_run_and_await_to_none(svc: BaseSessionService, app: str) -> None:
    # docs/guides/model.md promises ``.run()`` for blocking code and ``await`` for asyncio; a
    # Maybe that found nothing and a Completable give None both ways instead of raising.
    missing = svc.get_session(app_name=app, user_id="u", session_id="missing").run()
    expect(missing is None, f"get_session(unknown).run() gave {missing!r}")
    value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    deleted = svc.delete_session(app_name=app, user_id="u", session_id="s").run()
    expect(deleted is None, f"delete_session(...).run() gave {deleted!r}")

    async def awaited() -> tuple[object, object]:
        return (
            await svc.get_session(app_name=app, user_id="u", session_id="s"),
            await svc.delete_session(app_name=app, user_id="u", session_id="s"),
        )

    expect(asyncio.run(awaited()) == (None, None), "an empty result did not await to None")


@check
def methods_are_cold_until_subscribed(svc: BaseSessionService, app: str) -> None:
    create = svc.create_session(app_name=app, user_id="u", session_id="s")
    expect(
        optional(svc.get_session(app_name=app, user_id="u", session_id="s")) is None,
        "create_session ran before it was subscribed",
    )
    session = value(create)
    svc.append_event(session, event("never"))
    svc.delete_session(app_name=app, user_id="u", session_id="s")
    expect(get(svc, session).events == [], "append_event ran before it was subscribed")
