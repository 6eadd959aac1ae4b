"""Checks of appending events and reading them back."""

from __future__ import annotations

from google.genai import types

from adk_rx.errors import SessionNotFoundError
from adk_rx.events import Event, EventActions
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session
from adk_rx.testing.conformance.support import (
    check,
    complete,
    delta,
    event,
    expect,
    get,
    raises,
    texts,
    value,
)


@check
def appended_events_read_back_in_append_order_and_update_the_view(
    svc: BaseSessionService, app: str
) -> None:
    session = value(svc.create_session(app_name=app, user_id="u"))
    # Timestamps out of order on purpose: the store orders by append, not by clock.
    for text, ts in (("one", 30.0), ("two", 10.0), ("three", 20.0)):
        stored = value(svc.append_event(session, event(text, timestamp=ts)))
        expect(stored.text() == text, f"append emitted {stored!r}")
    expect(texts(session) == ["one", "two", "three"], f"view: {texts(session)}")
    got = get(svc, session)
    expect(texts(got) == ["one", "two", "three"], f"stored order: {texts(got)}")
    expect(got.last_update_time == 20.0, f"last_update_time {got.last_update_time}")


@check
def events_round_trip_every_field(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u"))
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
    value(svc.append_event(session, sent))
    (got,) = get(svc, session).events
    expect(got == sent, f"round trip changed the event:\n{got.to_json()}\n{sent.to_json()}")


@check
def partial_events_are_emitted_back_but_not_stored(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u"))
    partial = event("chunk", partial=True, actions=delta(k=1))
    expect(value(svc.append_event(session, partial)) is partial, "partial event not emitted")
    got = get(svc, session)
    expect(got.events == [] and "k" not in got.state, f"partial stored: {got.events}")


@check
def append_to_a_missing_session_raises_session_not_found(svc: BaseSessionService, app: str) -> None:
    ghost = Session(id="ghost", app_name=app, user_id="u")
    raises(SessionNotFoundError, svc.append_event(ghost, event()))
    session = value(svc.create_session(app_name=app, user_id="u", session_id="s"))
    complete(svc.delete_session(app_name=app, user_id="u", session_id="s"))
    raises(SessionNotFoundError, svc.append_event(session, event()))


@check
def a_view_that_is_behind_still_appends(svc: BaseSessionService, app: str) -> None:
    created = value(svc.create_session(app_name=app, user_id="u"))
    behind = get(svc, created)
    value(svc.append_event(created, event("first")))
    value(svc.append_event(created, event("second")))
    value(svc.append_event(behind, event("third")))  # this view never saw first/second
    expect(texts(get(svc, created)) == ["first", "second", "third"], "stale append order")


@check
def returned_views_do_not_alias_the_store(svc: BaseSessionService, app: str) -> None:
    session = value(svc.create_session(app_name=app, user_id="u", state={"k": 1}))
    value(svc.append_event(session, event("one")))
    view = get(svc, session)
    view.state["k"] = 99
    view.events.clear()
    again = get(svc, session)
    expect(again.state == {"k": 1} and len(again.events) == 1, "a view's edit reached the store")
