"""Small custom agents for workflow-agent tests: scripted, timed, blocking and endless ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.disposable import CompositeDisposable, Disposable
from reactivex.scheduler import NewThreadScheduler

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event, EventActions
from adk_rx.sessions import InMemorySessionService, Session
from adk_rx.testing import ScriptedLlm
from tests.spine_support import services_of

__all__ = [
    "ESCALATE",
    "BlockingAgent",
    "EndlessAgent",
    "GatedAgent",
    "ScriptedAgent",
    "TimedAgent",
    "invocation_context",
    "make_event",
    "request_text",
    "texts",
]

ESCALATE = "!"
"""A script text starting with this mark becomes an escalating event."""


def make_event(ctx: InvocationContext, text: str, **actions: Any) -> Event:
    """An event authored by the running agent, in its branch; ``"!x"`` escalates."""
    if text.startswith(ESCALATE):
        text = text[len(ESCALATE) :]
        actions["escalate"] = True
    return Event(
        author=ctx.agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(**actions) if actions else EventActions(),
    )


def texts(events: Iterable[Event]) -> list[str]:
    """The text of each event."""
    return [event.text() for event in events]


def request_text(llm: ScriptedLlm, index: int) -> str:
    """Every text part of the contents of the model's ``index``-th request, one per line."""
    return "\n".join(
        part.text or "" for content in llm.requests[index].contents for part in content.parts or []
    )


def invocation_context(agent: BaseAgent, **changes: Any) -> InvocationContext:
    """A context for calling ``agent.run_async`` directly, on a fresh in-memory session."""
    return InvocationContext(
        session=Session(id="s1", app_name="app", user_id="u1"),
        agent=agent,
        services=services_of(InMemorySessionService(), changes),
        **changes,
    )


class ScriptedAgent(BaseAgent):
    """Emits one scripted list of texts per run: run n plays ``runs[n % len(runs)]``.

    Attributes:
        contexts: the context of every run, in order.
    """

    def __init__(self, *, name: str, runs: Sequence[Sequence[str]], **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self._set("runs", [list(run) for run in runs])
        self._set("contexts", [])

    runs: list[list[str]]
    contexts: list[InvocationContext]

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        script = self.runs[len(self.contexts) % len(self.runs)]
        self.contexts.append(ctx)
        return rx.from_iterable([make_event(ctx, text) for text in script])


class TimedAgent(BaseAgent):
    """Emits one event ``delay`` after it is subscribed, timed on ``scheduler``.

    Attributes:
        fired: how many times the timer went off (a cancelled branch never fires).
    """

    def __init__(
        self,
        *,
        name: str,
        delay: timedelta,
        scheduler: abc.SchedulerBase,
        text: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self._set("delay", delay)
        self._set("timer_scheduler", scheduler)
        self._set("text", text or name)
        self._set("fired", [])

    delay: timedelta
    timer_scheduler: abc.SchedulerBase
    text: str
    fired: list[float]

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        def fire(_: Any) -> Event:
            self.fired.append(self.timer_scheduler.now.timestamp())
            return make_event(ctx, self.text)

        return rx.timer(self.delay, scheduler=self.timer_scheduler).pipe(ops.map(fire))


class BlockingAgent(BaseAgent):
    """Blocks the thread that subscribes it for ``seconds``, then emits one event."""

    def __init__(self, *, name: str, seconds: float, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self._set("seconds", seconds)

    seconds: float

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        def block(_: Any) -> Observable[Event]:
            time.sleep(self.seconds)  # the blocking work under test, not a wait for a signal
            return rx.just(make_event(ctx, self.name))

        return rx.defer(block)


class GatedAgent(BaseAgent):
    """Waits (on the thread that subscribes it) until ``gate`` is set, then emits or fails.

    ``text`` starting with ``"!"`` escalates; ``error`` makes the run fail instead.
    """

    def __init__(
        self,
        *,
        name: str,
        gate: threading.Event,
        text: str | None = None,
        error: Exception | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self._set("gate", gate)
        self._set("text", text or name)
        self._set("error", error)

    gate: threading.Event
    text: str
    error: Exception | None

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        def wait(_: Any) -> Observable[Event]:
            if not self.gate.wait(timeout=10):
                return rx.throw(TimeoutError(f"{self.name}: the gate was never opened"))
            if self.error is not None:
                return rx.throw(self.error)
            return rx.just(make_event(ctx, self.text))

        return rx.defer(wait)


class EndlessAgent(BaseAgent):
    """A cooperative producer: emits until its subscription is disposed.

    Like an idiomatic RxPY source it runs its loop as one action on the scheduler handed to
    ``subscribe`` (a new thread when none is), and its disposable sets the flag the loop
    checks between items. Stock ``subscribe_on`` hands a source the very thread it will
    later dispose on, so such a loop would never be told to stop.

    Attributes:
        started: set once it has emitted ``warmup`` events.
        disposed: set when its subscription is disposed.
        stopped: set when its loop has exited.
        threads: the threads its loops ran on.
        emitted: events emitted so far.
        emitted_at_dispose: ``emitted`` when the disposal reached it.
    """

    def __init__(self, *, name: str, warmup: int = 3, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self._set("warmup", warmup)
        self._set("started", threading.Event())
        self._set("disposed", threading.Event())
        self._set("stopped", threading.Event())
        self._set("_counts", {"emitted": 0, "emitted_at_dispose": -1})
        self._set("threads", [])

    warmup: int
    started: threading.Event
    disposed: threading.Event
    stopped: threading.Event
    threads: list[threading.Thread]
    _counts: dict[str, int]

    @property
    def emitted(self) -> int:
        return self._counts["emitted"]

    @property
    def emitted_at_dispose(self) -> int:
        return self._counts["emitted_at_dispose"]

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            def produce(*_: Any) -> None:
                self.threads.append(threading.current_thread())
                try:
                    while not self.disposed.is_set():
                        observer.on_next(make_event(ctx, f"{self.name} {self.emitted}"))
                        self._counts["emitted"] += 1
                        if self.emitted == self.warmup:
                            self.started.set()
                        self.disposed.wait(0.001)  # pace the producer
                finally:
                    self.stopped.set()

            def dispose() -> None:
                self._counts["emitted_at_dispose"] = self.emitted
                self.disposed.set()

            scheduled = (scheduler or NewThreadScheduler()).schedule(produce)
            return CompositeDisposable(Disposable(dispose), scheduled)

        return rx.create(subscribe)
