"""What the conformance checks share: the registry of checks and small assertions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.events import Event, EventActions
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import GetSessionConfig, Session

__all__ = [
    "CHECKS",
    "check",
    "complete",
    "delta",
    "event",
    "expect",
    "get",
    "optional",
    "raises",
    "texts",
    "value",
]

T = TypeVar("T")
Check = Callable[[BaseSessionService, str], None]
CHECKS: dict[str, Check] = {}
"""Every check by name, in the order the modules of the suite register them."""


def check(fn: Check) -> Check:
    """Registers ``fn`` as the check named after it."""
    CHECKS[fn.__name__] = fn
    return fn


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def value(source: Observable[T]) -> T:
    items = source.pipe(ops.to_list()).run()
    expect(len(items) == 1, f"expected exactly one item, got {len(items)}")
    return items[0]


def optional(source: Observable[T]) -> T | None:
    items = source.pipe(ops.to_list()).run()
    expect(len(items) <= 1, f"expected at most one item, got {len(items)}")
    return items[0] if items else None


def complete(source: Observable[Any]) -> None:
    items = source.pipe(ops.to_list()).run()
    expect(items == [], f"expected a Completable, got items {items!r}")


def raises(error: type[BaseException], source: Observable[Any]) -> BaseException:
    try:
        source.pipe(ops.to_list()).run()
    except error as exc:
        return exc
    raise AssertionError(f"expected {error.__name__}, nothing was raised")


def get(
    svc: BaseSessionService, session: Session, config: GetSessionConfig | None = None
) -> Session:
    got = optional(
        svc.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id, config=config
        )
    )
    expect(got is not None, f"session {session.id} not found")
    assert got is not None  # for the type checker
    return got


def event(text: str = "hi", *, author: str = "user", **fields: Any) -> Event:
    content = types.Content(
        role="user" if author == "user" else "model", parts=[types.Part(text=text)]
    )
    return Event(author=author, content=content, invocation_id="e-conformance", **fields)


def delta(**delta: Any) -> EventActions:
    return EventActions(state_delta=delta)


def texts(session: Session) -> list[str]:
    return [event.text() for event in session.events]
