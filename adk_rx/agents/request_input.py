"""The request an agent runs on, put in the session view for the length of its run.

A workflow's agent node and a delegated sub-agent (``mode``) run on an input that is no user
message of the session: like google-adk, the input is added to the invocation's session view
as a user event of the run's branch while the run goes on, and never stored (the session
writer only stores what the run emits). A resumed run puts it back before the run's stored
events, where it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.sessions.session import Session

__all__ = ["to_user_content", "with_request"]


def to_user_content(value: Any) -> types.Content:
    """The user message an agent sees for an input value (text, or its JSON)."""
    if isinstance(value, types.Content):
        return types.Content(role="user", parts=value.parts)
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=str)
        except (TypeError, ValueError):
            text = str(value)
    return types.Content(role="user", parts=[types.Part(text=text)])


def with_request(
    events: Observable[Event],
    session: Session,
    request: Event,
    position: Callable[[list[Event]], int],
) -> Observable[Event]:
    """``events``, with ``request`` in ``session``'s view while they run.

    Args:
        events: the run (cold).
        session: the invocation's session view.
        request: the user event carrying the run's input.
        position: where in the view's events the request goes (asked at subscribe time).
    """

    def build(_: Any) -> Observable[Event]:
        session.events.insert(position(session.events), request)

        def remove() -> None:
            found = session.events
            for i in range(len(found) - 1, -1, -1):
                if found[i] is request:
                    del found[i]
                    return

        return events.pipe(ops.finally_action(remove))

    return rx.defer(build)
