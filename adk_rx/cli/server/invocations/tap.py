"""A session service that reports every stored event to the server's invocation registry.

The Runner stores an invocation's user message first (not emitted) and, after a
cancellation, the records that keep the session valid (answers to open function calls and
the ``CANCELLED`` event) without emitting them either. The server needs both: the first
tells it the invocation id as soon as the run has started, the others belong in the
invocation's event log so a client sees where the run stopped. Wrapping the service is
the one seam that sees them all without touching the Runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import GetSessionConfig, ListSessionsResponse, Session

__all__ = ["DeletedListener", "StoredListener", "TappedSessionService"]

StoredListener = Callable[[Session, Event], None]
DeletedListener = Callable[[tuple[str, str, str]], None]


class TappedSessionService(BaseSessionService):
    """Delegates every method to ``inner``; calls ``on_stored(session, event)`` after each append
    and ``on_deleted((app, user, session))`` after each delete.

    The listener runs on the thread that completed the append, before the Runner emits the
    event, and must be quick and must not raise.
    """

    def __init__(
        self,
        inner: BaseSessionService,
        on_stored: StoredListener,
        on_deleted: DeletedListener | None = None,
    ) -> None:
        self.inner = inner
        self._on_stored = on_stored
        self._on_deleted = on_deleted

    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Observable[Session]:
        return self.inner.create_session(
            app_name=app_name, user_id=user_id, state=state, session_id=session_id
        )

    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Observable[Session]:
        return self.inner.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )

    def list_sessions(self, *, app_name: str, user_id: str) -> Observable[ListSessionsResponse]:
        return self.inner.list_sessions(app_name=app_name, user_id=user_id)

    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> Observable[None]:
        deleted = self.inner.delete_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        listener = self._on_deleted
        if listener is None:
            return deleted
        key = (app_name, user_id, session_id)
        return deleted.pipe(ops.do_action(on_completed=lambda: listener(key)))

    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        if event.partial:
            return self.inner.append_event(session, event)
        return self.inner.append_event(session, event).pipe(
            ops.do_action(lambda stored: self._on_stored(session, stored))
        )

    def lock_session(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[abc.DisposableBase]:
        return self.inner.lock_session(app_name=app_name, user_id=user_id, session_id=session_id)

    def close(self) -> None:
        self.inner.close()
