"""The session-service seam: five methods, each returning a cold Observable."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.rx._engine.awaitable import awaitable_results
from adk_rx.rx._engine.sync import single
from adk_rx.sessions.session import GetSessionConfig, ListSessionsResponse, Session
from adk_rx.state import State, check_shared_key

__all__ = ["BaseSessionService", "ScopedDelta", "split_delta"]


class BaseSessionService(ABC):
    """Stores sessions, their events and their scoped state.

    Every method returns a *cold* Observable: nothing happens until it is subscribed.
    ``create_session`` is a Single, ``get_session`` a Maybe (empty when not found),
    ``list_sessions`` a Single, ``delete_session`` a Completable and ``append_event`` a
    Single that emits the stored event.

    ``append_event(session, event)`` stores the event, applies its state delta to the stored
    session (``app:`` and ``user:`` keys to their shared scopes, ``temp:`` keys nowhere) and
    brings the given ``session`` view up to date. A partial event is neither stored nor
    applied.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every implementation's results can be awaited from asyncio
        # (see adk_rx.rx._engine.awaitable).
        awaitable_results(
            cls,
            (
                "create_session",
                "get_session",
                "list_sessions",
                "delete_session",
                "append_event",
                "lock_session",
            ),
        )

    @abstractmethod
    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Observable[Session]:
        """Creates a session (a new uuid when ``session_id`` is empty) and emits it."""

    @abstractmethod
    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Observable[Session]:
        """Emits the session, or completes empty when it does not exist."""

    @abstractmethod
    def list_sessions(self, *, app_name: str, user_id: str) -> Observable[ListSessionsResponse]:
        """Emits the user's sessions of the app, without their events."""

    @abstractmethod
    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> Observable[None]:
        """Deletes the session and its events; completes (also when it did not exist)."""

    @abstractmethod
    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        """Stores ``event`` in ``session`` and emits it."""

    def lock_session(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[abc.DisposableBase]:
        """Takes the session's turn lock; a Single of a handle whose disposal releases it.

        The Runner holds it for a whole invocation, so runs on one session never interleave.
        A store shared by several processes (SQL) locks across them; the default has nothing
        to share and grants the lock at once.
        """
        return single(Disposable)

    def close(self) -> None:  # noqa: B027 - optional hook, no-op by default
        """Releases connections or threads the service holds."""


def check_ids(app_name: str, user_id: str, session_id: str | None = None) -> None:
    """Raises ConfigurationError for an empty or non-string app name, user id or session id."""
    if (
        type(app_name) is str
        and app_name
        and type(user_id) is str
        and user_id
        and (
            session_id is None
            or (type(session_id) is str and session_id and " " < session_id[0] < "\x7f")
        )
    ):
        return  # the common case, decided without a call (every read and append checks)
    for label, value in (("app_name", app_name), ("user_id", user_id)):
        if not isinstance(value, str) or not value:
            raise ConfigurationError(f"{label} must be a non-empty string, got {value!r}")
    if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
        raise ConfigurationError(f"session_id must be a non-empty string, got {session_id!r}")


def new_session_id(session_id: str | None) -> str:
    """The given id stripped, or a fresh uuid when it is empty."""
    if session_id is not None and not isinstance(session_id, str):
        raise ConfigurationError(f"session_id must be a string, got {session_id!r}")
    session_id = (session_id or "").strip()
    return session_id or uuid.uuid4().hex


class ScopedDelta:
    """A state delta split by scope; ``temp:`` keys are dropped."""

    __slots__ = ("app", "session", "user")

    def __init__(self) -> None:
        self.app: dict[str, Any] = {}
        self.user: dict[str, Any] = {}
        self.session: dict[str, Any] = {}

    def __bool__(self) -> bool:
        return bool(self.app or self.user or self.session)


def split_delta(delta: Mapping[str, Any]) -> ScopedDelta:
    """Splits a delta into app, user and session parts, keeping prefixes; drops ``temp:``.

    Raises:
        StateValueError: an ``app:`` or ``user:`` key no store can keep (a NUL character,
            too long: see :func:`~adk_rx.state.check_shared_key`); the services split a
            delta before they write anything, so nothing of it is kept.
    """
    scoped = ScopedDelta()
    for key, value in delta.items():
        if key.startswith(State.APP_PREFIX):
            check_shared_key(key)
            scoped.app[key] = value
        elif key.startswith(State.USER_PREFIX):
            check_shared_key(key)
            scoped.user[key] = value
        elif not key.startswith(State.TEMP_PREFIX):
            scoped.session[key] = value
    return scoped


def update_view(session: Session, event: Event) -> None:
    """Brings a caller's session view up to date after ``event`` was stored."""
    if not session.take_applied(event):
        session.apply(event)


def storable(event: Event) -> Event:
    """The event as stored: ``temp:`` keys live for one invocation and are never kept."""
    delta = event.actions.state_delta
    if not delta or not any(key.startswith(State.TEMP_PREFIX) for key in delta):
        return event
    kept = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
    return event.replace(actions=event.actions.replace(state_delta=kept))
