"""Server-owned invocations: started by a request, run on after the client leaves.

Every run the server starts (``/run``, ``/run_sse`` and the invocations routes alike) goes
through :meth:`InvocationRegistry.start`:

* it answers "busy" when the session already has a run in this process (the registry's own
  table plus the Runner's per-session queue), so two runs never interleave;
* it subscribes to ``runner.run_async`` on the I/O scheduler, never on the server's loop,
  so a synchronous agent cannot stall the server;
* the invocation id becomes known when the store reports the user message (see
  :mod:`adk_rx.cli.server.invocations.tap`); stored events enter the log as the store
  reports them and partial events as the Runner emits them, so the log has every stored
  event of the run, in order, including the records written after a cancellation;
* disposing the subscription is the cancel; the log ends once the Runner has released the
  session, that is after the ``CANCELLED`` record is stored. A run that completes or fails
  ends its log once the session is released too, so a client that sees the end may start
  the session's next run at once.

Its bookkeeping is confined to the server's event loop, without a lock: the loop starts,
finds, cancels and ends runs (a run's end and a session's deletion, reported on pool threads,
are passed to the loop), and the store tap that pool threads call for every stored event
only reads or writes one dict entry, which is atomic in Python. So the loop never waits for
a pool thread, however many events the runs store.

Finished invocations stay readable (for reattaching) for ``Limits.finished_ttl`` seconds;
their logs are kept within per-user and memory bounds, and a log evicted early is served
again from the stored events (:mod:`adk_rx.cli.server.invocations.retention`). Deleting a
session forgets its invocations.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.genai import types
from reactivex import abc

from adk_rx.errors import (
    ConfigurationError,
    InvocationTimeoutError,
    SessionBusyError,
    TooManyRunsError,
)
from adk_rx.events import Event
from adk_rx.run_config import RunConfig
from adk_rx.runner import Runner
from adk_rx.rx import io_scheduler, subscribe_on_eager
from adk_rx.sessions.session import Session

from ..errors import failure_status
from ..limits import Limits
from .log import Entry, InvocationLog
from .retention import KeptLogs, Tombstone

__all__ = ["InvocationRegistry", "SessionBusyError", "TooManyRunsError"]

_Key = tuple[str, str, str]


def _when_session_idle(runner: Runner, key: _Key, fn: Callable[[], None]) -> None:
    """Calls ``fn`` once every run queued on the session has released it."""
    runner.when_idle(user_id=key[1], session_id=key[2]).subscribe(on_completed=fn)


_log = logging.getLogger("adk_rx.server")


def _log_failure(log: InvocationLog, key: _Key, status: str, error: Exception) -> None:
    """One line per failed run (with its invocation id); the traceback at DEBUG."""
    app, user, session = key
    _log.warning(
        "invocation %s %s (app %s, user %s, session %s): %s: %s",
        log.invocation_id or "(not started)",
        status,
        app,
        user,
        session,
        type(error).__name__,
        error,
    )
    _log.debug("invocation %s traceback", log.invocation_id, exc_info=error)


class InvocationRegistry:
    """The invocations this server started, by id, with their logs."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._loop: asyncio.AbstractEventLoop | None = None  # the server's, from the first run
        self._loop_thread: int | None = None
        self._active: dict[_Key, InvocationLog] = {}
        self._by_id: dict[str, InvocationLog] = {}  # the running ones
        self._kept = KeptLogs(limits)
        self._subscriptions: dict[int, abc.DisposableBase] = {}
        self._runners: dict[int, Runner] = {}

    # -- starting -------------------------------------------------------------------------
    def start(
        self,
        runner: Runner,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None,
        run_config: RunConfig,
        state_delta: Mapping[str, Any] | None,
        invocation_id: str | None = None,
        earlier: Sequence[Entry] | None = None,
    ) -> InvocationLog:
        """Starts a run; the log's :meth:`~InvocationLog.started` gives its id.

        With ``invocation_id`` the run resumes that invocation. A client's resume is started
        once the Runner has found the invocation in the session (an id the session lacks
        fails the run, and the route answers 404). A takeover passes ``earlier`` (what
        another server's log of the run held, perhaps nothing): that invocation is known to
        be the session's, so its id is the log's at once and ``earlier`` starts the log.

        Raises:
            SessionBusyError: the session has a run in this process.
            TooManyRunsError: too many runs are in progress.
            ConfigurationError: a malformed argument (from ``Runner.run_async``), or an
                ``invocation_id`` the Runner cannot resume.
        """
        key: _Key = (runner.app_name, user_id, session_id)
        resume: dict[str, Any] = {}
        if invocation_id is not None:
            if "invocation_id" not in inspect.signature(runner.run_async).parameters:
                raise ConfigurationError("this runtime cannot resume an invocation (invocation_id)")
            resume["invocation_id"] = invocation_id
        events = runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
            run_config=run_config,
            state_delta=state_delta,
            **resume,
        ).pipe(subscribe_on_eager(io_scheduler()))
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop, self._loop_thread = loop, threading.get_ident()
        self._kept.evict()
        if key in self._active or runner.is_busy(user_id=key[1], session_id=key[2]):
            raise SessionBusyError(f"session {session_id!r} already has a run in progress")
        if len(self._active) >= self.limits.max_running:
            raise TooManyRunsError(
                f"{len(self._active)} runs in progress (the limit); try again later"
            )
        log = InvocationLog(key, loop, self.limits.log_capacity, earlier or ())
        log.resumable = runner.services.is_resumable
        self._active[key] = log
        self._runners[id(log)] = runner
        if invocation_id is not None and earlier is not None:  # taken over: see above
            self._by_id[invocation_id] = log
            log.set_started(invocation_id)

        def on_next(event: Event) -> None:
            # Stored events reach the log from the store (on_stored), before this.
            if event.partial:
                log.add(event)

        # The Runner reports a run's end a moment before it releases the session: the log
        # ends once it has, so a client that sees the end may start its next run at once.
        def on_error(error: Exception) -> None:
            status = "timeout" if isinstance(error, InvocationTimeoutError) else "failed"
            _log_failure(log, key, status, error)
            message, code = f"{type(error).__name__}: {error}", failure_status(error)
            _when_session_idle(runner, key, lambda: self._end(log, status, message, code))

        def on_completed() -> None:
            _when_session_idle(runner, key, lambda: self._end(log, "completed", None))

        subscription = events.subscribe(on_next, on_error, on_completed)
        if id(log) in self._runners:  # not ended yet (the end comes through the loop)
            self._subscriptions[id(log)] = subscription
        return log

    def on_stored(self, session: Session, event: Event) -> None:
        """The store tap: every stored event of every session of the server (any thread;
        single dict reads and one insert, each atomic: no lock the loop could wait on)."""
        if event.author == "user":
            log = self._active.get((session.app_name, session.user_id, session.id))
            if log is None or log.invocation_id is not None:
                return
            self._by_id[event.invocation_id] = log
            log.set_started(event.invocation_id)
            return
        log = self._by_id.get(event.invocation_id)
        if log is not None:
            log.add(event)

    # -- looking up -----------------------------------------------------------------------
    def get(self, invocation_id: str) -> InvocationLog | None:
        """The invocation with that id, while it runs or its log is kept after it ended."""
        self._kept.evict()
        return self._by_id.get(invocation_id) or self._kept.get(invocation_id)

    def tombstone(self, invocation_id: str) -> Tombstone | None:
        """What is left of a finished invocation whose log was evicted before its time."""
        self._kept.evict()
        return self._kept.tombstone(invocation_id)

    def of_session(self, key: _Key) -> list[InvocationLog]:
        """The invocations of one session that the registry still holds, oldest first."""
        self._kept.evict()
        found = [log for log in list(self._by_id.values()) if log.key == key]
        found += self._kept.of_session(key)
        return sorted(found, key=lambda log: log.created_at)

    def forget_session(self, key: _Key) -> None:
        """Drops the finished invocations of a deleted session (they answer 404 after);
        from any thread (the store reports deletions on its own)."""
        self._on_loop(lambda: self._kept.forget_session(key))

    @property
    def kept_bytes(self) -> int:
        """The event JSON the kept logs of finished invocations hold."""
        return self._kept.size_bytes

    def is_running(self, key: _Key) -> bool:
        """True while the session has a run started by this registry."""
        return key in self._active

    def running(self) -> list[InvocationLog]:
        """Every invocation in progress."""
        return list(self._active.values())

    # -- ending ---------------------------------------------------------------------------
    def cancel(self, log: InvocationLog) -> bool:
        """Cancels a run by disposal; False when it had already ended.

        The log ends with ``cancelled`` once the Runner has stored the records that keep the
        session valid and released the session.
        """
        if log.finished or id(log) not in self._runners:
            return False
        runner = self._runners[id(log)]
        subscription = self._subscriptions.pop(id(log), None)
        if subscription is not None:
            subscription.dispose()
        _when_session_idle(runner, log.key, lambda: self._end(log, "cancelled", None))
        return True

    def _end(
        self, log: InvocationLog, status: Any, error: str | None, failure_status: int = 500
    ) -> None:
        self._on_loop(lambda: self._end_here(log, status, error, failure_status))

    def _end_here(
        self, log: InvocationLog, status: Any, error: str | None, failure_status: int
    ) -> None:
        # One step of the loop: a client that sees the end finds the session free and the
        # invocation among the finished ones.
        if self._active.get(log.key) is log:
            del self._active[log.key]
        self._subscriptions.pop(id(log), None)
        self._runners.pop(id(log), None)
        if not log.finish(status, error, failure_status):
            return
        if log.invocation_id is not None:
            self._by_id.pop(log.invocation_id, None)
            self._kept.add(log)

    def _on_loop(self, fn: Callable[[], None]) -> None:
        """Runs ``fn`` on the server's loop: now when called there, else soon."""
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            fn()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: the server has shut down
            loop.call_soon_threadsafe(fn)
