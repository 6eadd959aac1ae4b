"""Runner: the public entry point; one :class:`Invocation` per subscription.

``runner.run_async(...)`` is cold. Subscribing waits for earlier runs on the same session
(in this process) to finish, reads the session, stores the user message (not emitted), picks
the agent to run and subscribes to its events. For each event, in order:

1. apply it to the invocation's session view (so the next model step sees it);
2. persist it (``concat_map``: one append at a time; partial events are not stored);
3. emit it (after the plugins' ``on_event_callback``).

Disposing the subscription cancels the invocation for real: the running model stream and
tools are disposed, no later step starts, and the session is left valid: each stored
function call without a response gets ``{"error": "cancelled"}`` and a final event with
``error_code="CANCELLED"`` records where the invocation stopped. ``RunConfig.timeout`` does
the same with ``"TIMEOUT"`` and then errors the stream with InvocationTimeoutError.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Self

import reactivex as rx
from google.genai import types
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.abc import SchedulerBase
from reactivex.disposable import Disposable

from adk_rx.agents.base import BaseAgent
from adk_rx.apps import App
from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.auth.credential_service import BaseCredentialService
from adk_rx.compaction import BaseEventSummarizer
from adk_rx.compaction.default import default_summarizer
from adk_rx.errors import ConfigurationError, RunnerClosedError, SessionBusyError
from adk_rx.events import Event
from adk_rx.live.queue import LiveRequestQueue
from adk_rx.memory.base import BaseMemoryService
from adk_rx.plugins import BasePlugin, PluginManager
from adk_rx.run_config import RunConfig
from adk_rx.runner.code_executors import close_code_executors
from adk_rx.runner.invocation import Invocation
from adk_rx.runner.remember import remembering
from adk_rx.runner.request import TurnRequest, live_turn_request, turn_request
from adk_rx.runner.rewind import rewind_session
from adk_rx.runner.services import BuiltWith, TurnServices
from adk_rx.runner.toolsets import close_toolsets
from adk_rx.rx._engine.awaitable import AwaitableObservable
from adk_rx.rx._engine.top_level import Hand, StartAware
from adk_rx.rx.bridges import to_async_iterable, to_iterable
from adk_rx.rx.schedulers import timer_scheduler as default_timer_scheduler
from adk_rx.sessions.base import BaseSessionService
from adk_rx.telemetry import Telemetry

__all__ = ["Runner"]


def _app_name(name: str) -> str:
    # Older callers may store sessions under any app name; the App wrapping a bare agent
    # only needs a valid identifier.
    return name if name.isidentifier() and name != "user" else "app"


class Runner(BuiltWith):
    """Runs an agent tree against a session service.

    Pass either ``app`` or ``agent`` with ``app_name`` (and optionally ``plugins``).

    Args:
        app: the App to run (its name, root agent, plugins and policies).
        app_name: the app the sessions belong to.
        agent: the root agent.
        session_service: where sessions and events are stored.
        artifact_service: where artifacts are stored (optional).
        memory_service: long-term memory (optional).
        credential_service: where users' credentials for tools are kept between turns
            (optional; :mod:`adk_rx.auth`).
        plugins: plugins applied to every invocation, in order.
        io_scheduler: scheduler for blocking work (defaults to the shared I/O pool).
        timer_scheduler: scheduler for deadlines (defaults to adk_rx's timer thread; pass a
            ``reactivex.testing.TestScheduler`` for virtual time).
        tracer_provider: where spans go (OpenTelemetry's global provider by default).
        meter_provider: where metrics go (OpenTelemetry's global provider by default).

    Attributes:
        services: what every turn of this Runner uses, frozen (:class:`TurnServices`).
    """

    def __init__(
        self,
        *,
        app: App | None = None,
        app_name: str | None = None,
        agent: BaseAgent | None = None,
        session_service: BaseSessionService,
        artifact_service: BaseArtifactService | None = None,
        memory_service: BaseMemoryService | None = None,
        credential_service: BaseCredentialService | None = None,
        plugins: Sequence[BasePlugin] | None = None,
        io_scheduler: SchedulerBase | None = None,
        timer_scheduler: SchedulerBase | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        if app is not None:
            if not isinstance(app, App):
                raise ConfigurationError(f"app must be an App, got {type(app).__name__}")
            if agent is not None or app_name is not None or plugins is not None:
                raise ConfigurationError(
                    "pass either app= or agent= with app_name= (and plugins=), not both; "
                    "the app carries its name, root agent and plugins"
                )
            app_name, agent, plugins = app.name, app.root_agent, app.plugins
        if not isinstance(app_name, str) or not app_name:
            raise ConfigurationError(f"app_name must be a non-empty string, got {app_name!r}")
        if not isinstance(agent, BaseAgent):
            raise ConfigurationError(f"agent must be a BaseAgent, got {type(agent).__name__}")
        if not isinstance(session_service, BaseSessionService):
            raise ConfigurationError("session_service must be a BaseSessionService")
        the_app = app if app is not None else App(name=_app_name(app_name), root_agent=agent)
        compaction = the_app.events_compaction_config
        summarizer: BaseEventSummarizer | None = None
        if compaction is not None:
            summarizer = compaction.summarizer or default_summarizer(agent)
        plugin_manager = PluginManager(plugins)
        memory_config = the_app.memory_config
        if memory_config is not None and memory_config.add_session_after_invocation:
            plugin_manager.register_plugin(remembering(memory_service))
        self.services = TurnServices(
            session_service=session_service,
            artifact_service=artifact_service,
            memory_service=memory_service,
            credential_service=credential_service,
            plugins=plugin_manager,
            io_scheduler=io_scheduler,
            # Never None: time operators default to a scheduler that starts a thread per timer.
            timer_scheduler=timer_scheduler or default_timer_scheduler(),
            is_resumable=the_app.is_resumable,
            context_cache_config=the_app.context_cache_config,
            app=the_app,
            app_name=app_name,
            telemetry=Telemetry(tracer_provider, meter_provider),
            summarizer=summarizer,
        )

    # -- running ---------------------------------------------------------------------------
    def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        run_config: RunConfig | None = None,
        state_delta: Mapping[str, Any] | None = None,
        invocation_id: str | None = None,
    ) -> Observable[Event]:
        """Runs one invocation; a cold Observable of its events (the user message excluded).

        With ``invocation_id`` (a resumable app only), continues that earlier invocation
        where it stopped instead of starting a new one: finished agents do not run again,
        stored tool responses are reused, and ``new_message`` (optional) may carry the
        response of a pending long-running call.

        Raises (at call time) ConfigurationError for malformed arguments; the stream errors
        with SessionNotFoundError when the session does not exist and
        ``run_config.auto_create_session`` is off, with InvocationNotFoundError when the
        session holds no invocation ``invocation_id``, and with ConfigurationError, before
        anything is stored, when a function response in ``new_message`` answers no open call
        of the session (see :mod:`adk_rx.flows.open_calls`).
        """
        request = turn_request(
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
            run_config=run_config,
            state_delta=state_delta,
            invocation_id=invocation_id,
            resumable=self.services.is_resumable,
        )
        return self._invocations(request)

    def _invocations(self, request: TurnRequest) -> Observable[Event]:
        """A cold Observable whose every subscription is one new :class:`Invocation`."""

        def start(
            observer: abc.ObserverBase[Event], queued: bool, hand: Hand | None
        ) -> abc.DisposableBase:
            services = self.services
            invocation = Invocation(services, request, observer)
            if not services.runs.admit(invocation):
                observer.on_error(RunnerClosedError("the Runner is closed; it starts no new run"))
                return Disposable()
            if hand is not None:  # a consumer on another thread may cancel the run from now on
                hand(invocation)
            return invocation.start(queued)

        return StartAware(start)

    def run_live(
        self,
        *,
        user_id: str,
        session_id: str,
        live_request_queue: LiveRequestQueue,
        run_config: RunConfig | None = None,
    ) -> Observable[Event]:
        """Runs a live (bidirectional) session; a cold Observable of its events.

        On subscription the agent that takes the session's turn connects to its model
        (``BaseLlm.connect``) with its request and the history; then each content, blob or
        activity marker sent on ``live_request_queue`` goes to the model, and its answers come
        back as events: text and audio chunks, complete answers, transcriptions,
        ``interrupted`` and ``turn_complete``. Function calls run as in ``run_async`` and their
        responses go back on the connection; a transfer reconnects with the target agent.
        Events that are not partial (the user's contents, complete answers, calls and
        responses) are stored before they are emitted. ``live_request_queue.close()``
        completes the stream; disposing it closes the connection and stops pending tools.
        ``run_config.timeout`` applies to the whole live session.

        Raises (at call time) ConfigurationError for malformed arguments.
        """
        request = live_turn_request(
            user_id=user_id,
            session_id=session_id,
            live_request_queue=live_request_queue,
            run_config=run_config,
        )
        return self._invocations(request)

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        run_config: RunConfig | None = None,
        state_delta: Mapping[str, Any] | None = None,
        max_buffer: int = 256,
        invocation_id: str | None = None,
    ) -> Iterator[Event]:
        """Runs one invocation as a blocking iterator (bounded; leaving early cancels)."""
        return iter(
            to_iterable(
                self.run_async(
                    user_id=user_id,
                    session_id=session_id,
                    new_message=new_message,
                    run_config=run_config,
                    state_delta=state_delta,
                    invocation_id=invocation_id,
                ),
                max_buffer,
            )
        )

    def run_events(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        run_config: RunConfig | None = None,
        state_delta: Mapping[str, Any] | None = None,
        max_buffer: int = 256,
        invocation_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Runs one invocation as an async iterator (bounded; leaving early cancels)."""
        return to_async_iterable(
            self.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=new_message,
                run_config=run_config,
                state_delta=state_delta,
                invocation_id=invocation_id,
            ),
            max_buffer,
        ).__aiter__()

    def delete_session(self, *, user_id: str, session_id: str) -> Observable[None]:
        """Deletes the session with everything kept for it; a Completable.

        The session and its events go first, then the session's artifacts (not the user's
        ``user:`` files) and what the memory service remembered of it (a memory service
        that cannot forget one session keeps its entries).
        """
        key = {"app_name": self.app_name, "user_id": user_id, "session_id": session_id}
        steps: list[Observable[Any]] = [self.session_service.delete_session(**key)]
        if self.artifact_service is not None:
            steps.append(self.artifact_service.delete_session_artifacts(**key))
        if self.memory_service is not None:
            steps.append(self.memory_service.delete_session_memories(**key))
        return AwaitableObservable(
            lambda observer, scheduler=None: (
                rx.concat(*steps)
                .pipe(ops.ignore_elements())
                .subscribe(observer, scheduler=scheduler)
            )
        )

    def rewind(
        self, *, user_id: str, session_id: str, rewind_before_invocation_id: str
    ) -> Observable[Event]:
        """Rewinds the session to before an invocation (google-adk's ``rewind_async``).

        Appends one event that undoes the state and artifact changes of that invocation and of
        every later one; from then on they are left out of the model's history (see
        :mod:`adk_rx.runner.rewind`). A Single of the stored rewind event; it errors with
        SessionBusyError while a run of this Runner is on the session, SessionNotFoundError
        or InvocationNotFoundError when there is nothing to rewind.
        """
        rewind = rewind_session(
            sessions=self.session_service,
            artifacts=self.artifact_service,
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=rewind_before_invocation_id,
        )

        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if self.is_busy(user_id=user_id, session_id=session_id):
                observer.on_error(SessionBusyError("the session has a run; rewind it after"))
                return Disposable()
            return rewind.subscribe(observer, scheduler=scheduler)

        return AwaitableObservable(subscribe)

    def is_busy(self, *, user_id: str, session_id: str) -> bool:
        """True while a run of this Runner on the session is queued, running or cancelling."""
        return self.services.gates.busy((self.app_name, user_id, session_id))

    def when_idle(self, *, user_id: str, session_id: str) -> Observable[None]:
        """A Completable that completes once every run of this Runner on the session so far
        has finished, including the records a cancelled run writes after its disposal."""

        def subscribe(
            observer: abc.ObserverBase[None], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            self.services.gates.when_idle(
                (self.app_name, user_id, session_id), observer.on_completed
            )
            return Disposable()

        return AwaitableObservable(subscribe)

    def close(self, timeout: float | None = 30.0) -> None:
        """Closes the Runner: graceful for the runs, then frees what it holds.

        New subscriptions to ``run_async`` / ``run_live`` error with RunnerClosedError at
        once. Runs already waiting or running get up to ``timeout`` seconds (None: no limit)
        to end on their own; those still going then are cancelled as a dispose cancels them
        (their open calls answered, a ``CANCELLED`` event stored) and their subscribers get
        InvocationCancelledError. Then the plugins, the toolsets and the code executors of the
        agent tree are closed. Blocks the calling thread until all that is done (from asyncio, use
        ``async with Runner(...)`` or ``await asyncio.to_thread(runner.close)``).

        Args:
            timeout: seconds the running runs may take to end before they are cancelled.
        """
        self.services.runs.close(timeout)
        self.services.plugins.close()
        self.close_toolsets()
        close_code_executors(self.agent)  # a stateful executor's interpreters

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        # On a worker thread: runs whose tools or models live on this loop must go on.
        await asyncio.to_thread(self.close)

    def close_toolsets(self) -> None:
        """Closes every toolset of the agent tree (MCP sessions and their processes)."""
        close_toolsets(self.agent)
