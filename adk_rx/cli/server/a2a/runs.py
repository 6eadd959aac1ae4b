"""A2A tasks as the server's own invocations: same session store, same limits.

:class:`ServerRuns` is the :class:`~adk_rx.a2a.runs.RunStarter` of one app under the
server: each task's run starts the way ``/run_sse`` starts one (the session's turn held
across server processes, ``Limits.max_running`` and ``Limits.run_timeout``, the caller's
``traceparent``), is listed among the session's invocations, and is read from its
invocation log. A cancel is the invocation cancel of ``.../invocations/{id}:cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.exceptions import HTTPException

from adk_rx.a2a.runs import RunRequest
from adk_rx.errors import InvocationTimeoutError, RunError, SessionBusyError
from adk_rx.events import Event
from adk_rx.runner import Runner
from adk_rx.telemetry.propagation import continued_trace

from ..cluster.turns import hold_turn, release_turn
from ..edge.validation import check_new_id, check_part_count
from ..invocations.log import InvocationLog
from ..shared import Server

__all__ = ["ServerRuns"]


class _LoggedRun:
    """One task's run as a server-owned invocation, read from its log."""

    def __init__(self, server: Server, log: InvocationLog) -> None:
        self._server = server
        self._log = log

    async def _read(self) -> AsyncIterator[Event]:
        log, batch = self._log, self._server.limits.batch_events
        cursor = 0
        while True:
            read = log.read_after(cursor, batch)
            for entry in read.entries:
                cursor = entry.seq
                yield entry.event
            if read.finished:
                break
            if not read.entries:
                await log.wait(None)
        if log.status == "timeout":
            raise InvocationTimeoutError(log.error or "the run ran past the server's run timeout")
        if log.status == "failed":
            raise RunError(log.error or "the run failed")

    def events(self) -> AsyncIterator[Event]:
        return self._read()

    async def cancel(self, timeout: float) -> None:
        log = self._log
        self._server.registry.cancel(log)

        async def ended() -> None:
            while not log.finished:
                await log.wait(None)

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ended(), timeout)


class ServerRuns:
    """Starts one app's A2A runs as the server's invocations."""

    def __init__(self, server: Server, runner: Runner) -> None:
        self._server = server
        self._runner = runner

    @property
    def app_name(self) -> str:
        return self._runner.app_name

    @property
    def is_resumable(self) -> bool:
        return self._runner.services.is_resumable

    async def start(self, request: RunRequest) -> _LoggedRun:
        """Starts the run once it has stored its user message.

        Raises:
            RequestRejectedError: a context id no session may have, too many parts.
            SessionBusyError, TooManyRunsError, ConfigurationError: as ``/run`` refuses.
        """
        server, app_name = self._server, self.app_name
        user, sid = request.user_id, check_new_id(request.session_id, "the context id")
        check_part_count(len(request.new_message.parts or ()), server.limits)
        try:
            held = await hold_turn(server, app_name, user, sid)
        except HTTPException as exc:  # another server process runs the session
            raise SessionBusyError(str(exc.detail)) from exc
        try:
            with continued_trace(request.headers):  # the run continues the caller's trace
                log = server.registry.start(
                    self._runner,
                    user_id=user,
                    session_id=sid,
                    new_message=request.new_message,
                    run_config=request.run_config(server.limits.run_timeout),
                    state_delta=None,
                    invocation_id=request.invocation_id,
                )
        except BaseException:
            await release_turn(held)
            raise
        try:
            await log.started(server.limits.start_timeout)
        except TimeoutError as exc:
            server.registry.cancel(log)
            raise RunError("the run did not start in time; it was cancelled") from exc
        finally:  # started: the run holds the session's own turn lock (cluster/turns.py)
            await release_turn(held)
        if server.broker is not None:
            await server.broker.publish(log)
        if log.invocation_id is None and log.finished:
            raise RunError(log.error or f"the run ended before it started ({log.status})")
        return _LoggedRun(server, log)
