"""InMemorySessionService: sessions in process memory, bounded by count and idle time."""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from reactivex import Observable

from adk_rx.errors import ConfigurationError, SessionExistsError, SessionNotFoundError
from adk_rx.events import Event
from adk_rx.rx._engine.awaitable import returns_awaitable
from adk_rx.rx._engine.sync import SyncObservable, completable, single
from adk_rx.sessions.base import (
    BaseSessionService,
    check_ids,
    new_session_id,
    split_delta,
    storable,
)
from adk_rx.sessions.session import (
    GetSessionConfig,
    ListSessionsResponse,
    Session,
    merge_scoped_state,
)
from adk_rx.state import apply_delta

__all__ = ["InMemorySessionService"]

_Key = tuple[str, str, str]


class _Stored:
    """What the service keeps per session: events are shared (immutable), never copied."""

    __slots__ = ("events", "last_access", "last_update_time", "memo", "state")

    def __init__(self, state: dict[str, Any], now: float) -> None:
        self.state = state
        self.events: list[Event] = []
        self.last_update_time = now
        self.last_access = now
        self.memo: dict[Any, Any] = {}


class InMemorySessionService(BaseSessionService):
    """Keeps sessions in a dict; for tests, examples and single-process services.

    Reads hand out a view whose event list is a shallow copy (events are immutable, so they
    are shared, never deep-copied); appends are O(1).

    Args:
        max_sessions: keep at most this many sessions; the least recently used is evicted.
        ttl_seconds: evict a session not read or written for this long.
        clock: time source for ``ttl_seconds`` (seconds; defaults to ``time.monotonic``).
    """

    def __init__(
        self,
        max_sessions: int | None = None,
        ttl_seconds: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions is not None and max_sessions < 1:
            raise ConfigurationError(f"max_sessions must be >= 1, got {max_sessions}")
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ConfigurationError(f"ttl_seconds must be > 0, got {ttl_seconds}")
        self._max_sessions = max_sessions
        self._ttl = ttl_seconds
        self._bounded = max_sessions is not None or ttl_seconds is not None
        self._clock = clock
        self._lock = threading.RLock()
        self._sessions: OrderedDict[_Key, _Stored] = OrderedDict()
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}

    # -- the five methods ------------------------------------------------------------------

    @returns_awaitable  # a SyncObservable
    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Observable[Session]:
        """Creates a session; ``app:`` / ``user:`` keys of ``state`` go to their scopes."""

        def create() -> Session:
            check_ids(app_name, user_id)
            sid = new_session_id(session_id)
            key = (app_name, user_id, sid)
            scoped = split_delta(state or {})
            with self._lock:
                self._evict_expired()
                if key in self._sessions:
                    raise SessionExistsError(
                        f"session {sid!r} already exists for app {app_name!r}, user {user_id!r}"
                    )
                initial = copy.deepcopy(scoped.session) if scoped.session else {}
                stored = _Stored(initial, time.time())
                stored.last_access = self._clock()
                self._sessions[key] = stored
                if scoped.app:
                    apply_delta(self._app_state.setdefault(app_name, {}), scoped.app)
                if scoped.user:
                    apply_delta(self._user_state.setdefault((app_name, user_id), {}), scoped.user)
                self._evict_over_capacity()
                return self._view(key, stored, None)

        return single(create)

    @returns_awaitable  # a SyncObservable
    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Observable[Session]:
        """Emits a view of the session, or completes empty."""

        def get() -> tuple[Session, ...]:
            check_ids(app_name, user_id, session_id)
            key = (app_name, user_id, session_id)
            with self._lock:
                if self._ttl is not None:
                    self._evict_expired()
                try:  # (a miss is rare: no call for a hit)
                    stored = self._sessions[key]
                except KeyError:
                    return ()
                if self._bounded:
                    self._touch(key, stored)
                return (self._view(key, stored, config),)

        return SyncObservable(None, get)  # a Maybe, answered at once

    @returns_awaitable  # a SyncObservable
    def list_sessions(self, *, app_name: str, user_id: str) -> Observable[ListSessionsResponse]:
        """Emits the user's sessions (state included, events left out)."""

        def list_() -> ListSessionsResponse:
            check_ids(app_name, user_id)
            with self._lock:
                self._evict_expired()
                sessions = [
                    Session(
                        id=sid,
                        app_name=app,
                        user_id=user,
                        state=self._state_of(app, user, stored),
                        last_update_time=stored.last_update_time,
                    )
                    for (app, user, sid), stored in self._sessions.items()
                    if app == app_name and user == user_id
                ]
            return ListSessionsResponse(sessions=sessions)

        return single(list_)

    @returns_awaitable  # a SyncObservable
    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> Observable[None]:
        """Deletes the session; deleting a missing session is not an error."""

        def delete() -> None:
            check_ids(app_name, user_id, session_id)
            with self._lock:
                self._sessions.pop((app_name, user_id, session_id), None)

        return completable(delete)

    @returns_awaitable  # a SyncObservable
    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        """Appends ``event`` to the stored session and applies its delta to every scope."""

        def append() -> tuple[Event]:
            if event.partial:
                return (event,)
            key = (session.app_name, session.user_id, session.id)
            delta = event.actions.state_delta
            with self._lock:
                try:  # (no call for a hit)
                    stored = self._sessions[key]
                except KeyError:
                    raise SessionNotFoundError(
                        f"cannot append to session {session.id!r} of app {session.app_name!r}, "
                        f"user {session.user_id!r}: it does not exist (deleted or evicted?)"
                    ) from None
                if delta:
                    scoped = split_delta(delta)
                    if scoped.session:
                        apply_delta(stored.state, scoped.session)
                    if scoped.app:
                        apply_delta(self._app_state.setdefault(key[0], {}), scoped.app)
                    if scoped.user:
                        apply_delta(self._user_state.setdefault(key[:2], {}), scoped.user)
                stored.events.append(storable(event) if delta else event)
                stored.last_update_time = event.timestamp
                if self._bounded:
                    self._touch(key, stored)
            # update_view, inline: the view the Runner applied the event to ahead of the store
            # only forgets it was pending.
            pending = session._unpersisted  # pyright: ignore[reportPrivateUsage]
            if event.id in pending:
                del pending[event.id]
            else:
                session.apply(event)
            return (event,)

        return SyncObservable(None, append)  # a Single, answered at once

    # -- internals -------------------------------------------------------------------------

    def _state_of(self, app: str, user: str, stored: _Stored) -> dict[str, Any]:
        if not self._app_state and not self._user_state:
            return dict(stored.state)  # no app: or user: keys were ever written
        return merge_scoped_state(
            stored.state, self._app_state.get(app), self._user_state.get((app, user))
        )

    def _view(self, key: _Key, stored: _Stored, config: GetSessionConfig | None) -> Session:
        events = stored.events if config is None else config.apply(stored.events)
        if not self._app_state and not self._user_state:  # (as _state_of, inline: per read)
            state = dict(stored.state)
        else:
            state = self._state_of(key[0], key[1], stored)
        return Session(
            id=key[2],
            app_name=key[0],
            user_id=key[1],
            state=state,
            events=list(events),
            last_update_time=stored.last_update_time,
            memo=stored.memo if config is None else None,
        )

    def _touch(self, key: _Key, stored: _Stored) -> None:
        if self._ttl is not None:
            stored.last_access = self._clock()
        if self._max_sessions is not None or self._ttl is not None:
            self._sessions.move_to_end(key)

    def _evict_expired(self) -> None:
        if self._ttl is None:
            return
        deadline = self._clock() - self._ttl
        sessions = self._sessions
        while sessions:
            key, stored = next(iter(sessions.items()))
            if stored.last_access > deadline:
                break
            del sessions[key]

    def _evict_over_capacity(self) -> None:
        if self._max_sessions is None:
            return
        while len(self._sessions) > self._max_sessions:
            self._sessions.popitem(last=False)
