"""The one seam between an A2A task and the run that answers it.

The executor (``executor.py``) turns each task into a :class:`RunRequest` and asks a
:class:`RunStarter` for the run; :class:`RunnerRuns` starts it on a :class:`Runner` (what
:func:`adk_rx.a2a.to_a2a` serves), and ``adk-rx api-server --a2a`` starts it as one of the
server's own invocations, under the same limits as its HTTP routes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, cast

from google.genai import types

from adk_rx.events import Event
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.runner import Runner
from adk_rx.rx import io_scheduler, subscribe_on_eager, to_async_iterable
from adk_rx.telemetry.propagation import continued_trace

__all__ = ["RunRequest", "RunStarter", "RunnerRuns", "StartedRun"]


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One task's run: who runs it, in which session, with what message.

    Attributes:
        user_id: the session's user (the caller's authenticated name, else one per context).
        session_id: the A2A context id: one conversation, one session.
        new_message: the task's message.
        streaming: the caller reads the task as a stream (``message/stream``): the model
            streams too, so its chunks reach the caller as they come.
        invocation_id: an earlier invocation of a resumable app that this task continues.
        headers: the request's HTTP headers (``traceparent`` continues the caller's trace).
    """

    user_id: str
    session_id: str
    new_message: types.Content
    streaming: bool = False
    invocation_id: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def run_config(self, timeout: float | None = None) -> RunConfig:
        """The run's config: a missing session is created (a new context starts one)."""
        mode = StreamingMode.SSE if self.streaming else StreamingMode.NONE
        return RunConfig(streaming_mode=mode, auto_create_session=True, timeout=timeout)


class StartedRun(Protocol):
    """A run in progress."""

    def events(self) -> AsyncIterator[Event]:
        """Its events, partial ones included; raises what the run fails with."""
        ...

    async def cancel(self, timeout: float) -> None:
        """Disposes the run and waits (at most ``timeout`` seconds) until its session has
        stored where it stopped (``CANCELLED``)."""
        ...


class RunStarter(Protocol):
    """Starts the runs of one app."""

    @property
    def app_name(self) -> str: ...

    @property
    def is_resumable(self) -> bool: ...

    async def start(self, request: RunRequest) -> StartedRun:
        """Starts the run (ConfigurationError for a request the Runner refuses)."""
        ...


class _ClosingIterator(Protocol):
    """What ``to_async_iterable`` returns: closing it disposes the subscription."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    def __anext__(self) -> Awaitable[Event]: ...

    def close(self) -> None: ...


class _RunnerRun:
    def __init__(self, runner: Runner, request: RunRequest) -> None:
        self._runner = runner
        self._request = request
        source = runner.run_async(
            user_id=request.user_id,
            session_id=request.session_id,
            new_message=request.new_message,
            run_config=request.run_config(),
            invocation_id=request.invocation_id,
        )
        # Subscribed off the loop: a synchronous agent must not run on the server's loop.
        events = to_async_iterable(source.pipe(subscribe_on_eager(io_scheduler())))
        self._events = cast(_ClosingIterator, events)

    async def _iterate(self) -> AsyncIterator[Event]:
        # The first __anext__ subscribes: in the caller's trace, when it sent one.
        with continued_trace(self._request.headers):
            first = await anext(self._events, None)
        if first is None:
            return
        yield first
        async for event in self._events:
            yield event

    def events(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def cancel(self, timeout: float) -> None:
        self._events.close()  # disposes the subscription: the Runner cancels the run
        request = self._request

        async def idle() -> None:
            await self._runner.when_idle(user_id=request.user_id, session_id=request.session_id)

        # Past the bound the run ends on its own; the task is cancelled all the same.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(idle(), timeout)


class RunnerRuns:
    """Starts each task's run on ``runner`` (its session store, its services)."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    @property
    def app_name(self) -> str:
        return self.runner.app_name

    @property
    def is_resumable(self) -> bool:
        return self.runner.services.is_resumable

    async def start(self, request: RunRequest) -> StartedRun:
        return _RunnerRun(self.runner, request)
