"""``Runner.rewind``: undo a session's invocations from one on (google-adk's ``rewind_async``).

Nothing is deleted. One event is appended, authored by ``user``, whose actions say
``rewind_before_invocation_id`` and carry the deltas that undo what the rewound events did:

* ``state_delta``: the session's own keys as they were before the invocation (keys added
  since are removed); ``app:``, ``user:`` and ``temp:`` keys are left alone;
* ``artifact_delta``: each session artifact saved since is saved again as it was then (a
  file that did not exist then gets google-adk's rewind marker, an empty
  ``application/octet-stream`` part, which loads as absent); ``user:`` files are left alone.

From then on the model's history and the choice of the next agent skip the rewound events
(:mod:`adk_rx.sessions.rewind`).
"""

from __future__ import annotations

import uuid
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.artifacts.parts import rewind_marker
from adk_rx.errors import InvocationNotFoundError, SessionNotFoundError
from adk_rx.events import Event, EventActions
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session
from adk_rx.state import State

__all__ = ["rewind_session", "state_delta_for_rewind"]

_NOT_SESSION_KEYS = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)


def state_delta_for_rewind(session: Session, index: int) -> dict[str, Any]:
    """The delta that brings the session's own keys back to how they were before ``index``."""
    before: dict[str, Any] = {}
    for event in session.events[:index]:
        for key, value in event.actions.state_delta.items():
            if key.startswith(_NOT_SESSION_KEYS):
                continue
            if value is None:
                before.pop(key, None)
            else:
                before[key] = value
    delta = {k: v for k, v in before.items() if session.state.get(k, _MISSING) != v}
    for key in session.state:
        if not key.startswith(_NOT_SESSION_KEYS) and key not in before:
            delta[key] = None
    return delta


_MISSING = object()


def rewind_session(
    *,
    sessions: BaseSessionService,
    artifacts: BaseArtifactService | None,
    app_name: str,
    user_id: str,
    session_id: str,
    invocation_id: str,
) -> Observable[Event]:
    """A Single of the stored rewind event (cold: nothing happens before subscription)."""

    def start(_: Any) -> Observable[Event]:
        found = sessions.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        return found.pipe(
            ops.default_if_empty(None),
            ops.flat_map(lambda session: _rewind(session, sessions, artifacts, invocation_id)),
        )

    return rx.defer(start)


def _rewind(
    session: Session | None,
    sessions: BaseSessionService,
    artifacts: BaseArtifactService | None,
    invocation_id: str,
) -> Observable[Event]:
    if session is None:
        return rx.throw(SessionNotFoundError("no such session to rewind"))
    index = next(
        (i for i, e in enumerate(session.events) if e.invocation_id == invocation_id), None
    )
    if index is None:
        return rx.throw(
            InvocationNotFoundError(f"session {session.id} holds no invocation {invocation_id!r}")
        )
    state_delta = state_delta_for_rewind(session, index)

    def stored(artifact_delta: dict[str, int]) -> Observable[Event]:
        event = Event(
            invocation_id=f"e-{uuid.uuid4()}",
            author="user",
            actions=EventActions(
                rewind_before_invocation_id=invocation_id,
                state_delta=state_delta,
                artifact_delta=artifact_delta,
            ),
        )
        return sessions.append_event(session, event)

    return _artifact_delta(session, index, artifacts).pipe(ops.flat_map(stored))


def _artifact_delta(
    session: Session, index: int, artifacts: BaseArtifactService | None
) -> Observable[dict[str, int]]:
    """Saves each changed session file as it was before ``index``; their new versions."""
    if artifacts is None:
        return rx.just({})
    then: dict[str, int] = {}
    for event in session.events[:index]:
        then.update(event.actions.artifact_delta)
    now: dict[str, int] = {}
    for event in session.events:
        now.update(event.actions.artifact_delta)
    changed = [
        (name, then.get(name))
        for name, version in now.items()
        if not name.startswith("user:") and then.get(name) != version
    ]
    app, user, sid = session.app_name, session.user_id, session.id

    def restore(name: str, version: int | None) -> Observable[tuple[str, int]]:
        old: Observable[types.Part] = (
            rx.just(rewind_marker())
            if version is None
            else artifacts.load_artifact(
                app_name=app, user_id=user, session_id=sid, filename=name, version=version
            ).pipe(ops.default_if_empty(rewind_marker()))
        )

        def save(part: types.Part) -> Observable[int]:
            return artifacts.save_artifact(
                app_name=app, user_id=user, session_id=sid, filename=name, artifact=part
            )

        return old.pipe(ops.take(1), ops.flat_map(save), ops.map(lambda saved: (name, saved)))

    return rx.concat(*(restore(n, v) for n, v in changed)).pipe(
        ops.to_dict(lambda pair: pair[0], lambda pair: pair[1]),
        ops.map(dict),
    )
