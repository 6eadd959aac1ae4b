"""A plain LlmAgent's turn, driven by the Runner itself.

The generic body of a turn is ``agent.run_async(ctx)`` (an Observable around the agent's
callbacks and span) around ``from_generator`` (the agent's step loop), under
``concat_map_direct`` (the session writer): three subscriptions set up and torn down per turn
although, for a plain agent answered at once, each only passes the events on. Here the
Runner runs the step generator (:func:`~adk_rx.flows.llm_loop.llm_steps`) in a loop of its
own, and each event is applied, stored and emitted as plain calls, in the same order::

    generator yields:      just(e1)             just(e2)|
    each event:            apply, persist, emit  apply, persist, emit
    subscriber:            e1                    e2|

Only where that path is the generic one with nothing in between (:func:`plain_turn`): an
LlmAgent as built (no subclass), no agent callback, no span, no plugin hook on the turn's
events, no structured output or task, not resumed nor live, an app that is not resumable.

At the first asynchronous edge (the generator yields an Observable that is not already here,
or an append completes later) the rest of the turn is handed to the generic pipeline: the
suspended generator goes on inside ``from_generator`` under the session writer's
``concat_map_direct``, subscribed as the invocation's body (after the append in flight, if
that was the edge). Disposal stops the loop before the next event and closes the generator;
an error of the generator fails the invocation as the generic path's would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reactivex as rx
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.agents.llm import LlmAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.flows.light_event import CHUNK_EVENT
from adk_rx.flows.llm_loop import llm_steps
from adk_rx.runner.body import written
from adk_rx.runner.request import TurnRequest
from adk_rx.runner.services import TurnServices
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine.generator_stage import Steps, closed, from_generator
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["PlainTurn", "plain_turn"]

# Plugin hooks that see the turn or its events: with one, the generic body runs.
_TURN_HOOKS = frozenset(
    {
        "on_event_callback",
        "after_run_callback",
        "before_agent_callback",
        "after_agent_callback",
    }
)


def plain_turn(
    services: TurnServices,
    request: TurnRequest,
    ctx: InvocationContext,
    writer: SessionWriter,
    agent: Any,
) -> PlainTurn | None:
    """The driver of ``agent``'s turn when the generic body would add nothing, else None."""
    if (
        type(agent) is not LlmAgent
        or ctx.trace is not None
        or request.live_queue is not None
        or request.resume_id is not None
        or services.is_resumable
        or ctx.resume is not None
        or agent.before_agent_callback
        or agent.after_agent_callback
        or agent.mode == "task"
        or agent.output_schema is not None
        or (services.plugins.hooks and not _TURN_HOOKS.isdisjoint(services.plugins.hooks))
    ):
        return None
    return PlainTurn(services, ctx, writer, agent)


class PlainTurn(abc.DisposableBase):
    """One plain turn's step loop, run by the Runner (see the module's docstring)."""

    __slots__ = ("_agent", "_ctx", "_generator", "_services", "_writer", "disposed")

    def __init__(
        self,
        services: TurnServices,
        ctx: InvocationContext,
        writer: SessionWriter,
        agent: LlmAgent,
    ) -> None:
        self._services = services
        self._ctx = ctx
        self._writer = writer
        self._agent = agent
        self._generator: Steps[Event] | None = None
        self.disposed = False

    def run(
        self,
        chain: StageChain,
        emit: Callable[[Event], None],
        then: Callable[[Any], None],
    ) -> None:
        """Runs the turn as ``chain``'s body: ``emit`` each event, ``then(None)`` at the end;
        an error goes to the chain's ``fail``."""
        if chain.state is not RunState.RUNNING:
            return
        chain.body.disposable = self  # a stop disposes the loop
        agent = self._agent
        # As agent.run_async: the agent's own context, then its steps (no callbacks).
        generator = self._generator = llm_steps(agent, agent._own_context(self._ctx))  # pyright: ignore[reportPrivateUsage]
        save = agent._save_output if agent.output_key is not None else None  # pyright: ignore[reportPrivateUsage]
        writer = self._writer
        value: Event | None = None
        error: Exception | None = None
        while not self.disposed:
            try:
                if error is None:
                    item = generator.send(value)
                else:
                    item, error = generator.throw(error), None
            except StopIteration:
                self._generator = None
                if not self.disposed and chain.state is RunState.RUNNING:
                    then(None)
                return
            except Exception as exc:
                self._generator = None
                if not self.disposed:
                    chain.fail(exc)
                return
            if type(item) is not SyncObservable:
                self._hand_over(chain, emit, then, item, None, None)
                return
            value = None
            values = item.values
            if values is None:
                try:
                    values = item.items_now()
                except Exception as exc:
                    error = exc  # raised inside the generator at its yield, as from_generator does
                    continue
            for index, one in enumerate(values):
                if self.disposed:
                    break
                value = one
                event = one if save is None else save(one)
                if type(event) is CHUNK_EVENT or event.partial:
                    emit(event)  # a chunk is neither applied nor stored
                    continue
                writer.apply(event)
                stored = writer.persist(event)
                if type(stored) is not SyncObservable:
                    # The append goes on later: the rest of the turn follows it.
                    rest = SyncObservable(values[index + 1 :]) if index + 1 < len(values) else None
                    self._hand_over(chain, emit, then, rest, stored, values[-1])
                    return
                stored_now = stored.values  # persist's answer at once: its items are set
                for out in stored_now if stored_now is not None else stored.items_now():
                    if self.disposed:
                        break
                    emit(out)
        self._close()

    def _hand_over(
        self,
        chain: StageChain,
        emit: Callable[[Event], None],
        then: Callable[[Any], None],
        pending: Observable[Event] | None,
        appending: Observable[Event] | None,
        value: Event | None,
    ) -> None:
        """Hands the rest of the turn to the generic pipeline: ``pending`` (what the
        generator waits for, or the rest of its last batch) first, then the generator sent
        ``value`` (or what ``pending`` ended with); after ``appending``, when an append of
        an event already applied is in flight."""
        generator, self._generator = self._generator, None
        assert generator is not None
        agent = self._agent
        steps = from_generator(lambda: _resumed(generator, pending, value))
        if agent.output_key is not None:
            steps = steps.pipe(ops.map(agent._save_output))  # pyright: ignore[reportPrivateUsage]
        rest = written(self._services, self._ctx, self._writer, steps)
        if appending is not None:
            rest = rx.concat(appending, rest)
        if chain.state is not RunState.RUNNING:
            generator.close()  # stopped meanwhile: the rest is never subscribed
            return
        chain.step(lambda: rest, then, emit)

    def _close(self) -> None:
        if self._generator is not None and closed(self._generator):
            self._generator = None

    def dispose(self) -> None:
        """Stops the loop before its next event and closes the generator."""
        self.disposed = True
        self._close()


def _resumed(
    generator: Steps[Event], pending: Observable[Event] | None, value: Event | None
) -> Steps[Event]:
    """``generator`` from where it is suspended: ``pending`` yielded in its place first (the
    generator gets what it ends with), else the generator sent ``value``."""
    try:
        error: Exception | None = None
        if pending is not None:
            # Yielded from a list, not a local: while the model is awaited, this frame keeps
            # no Observable that was subscribed already (nor the closures it holds).
            box = [pending]
            del pending
            try:
                value = yield box.pop()
            except Exception as exc:
                error = exc
        while True:
            try:
                item = generator.send(value) if error is None else generator.throw(error)
            except StopIteration as stop:
                return stop.value
            error = None
            try:
                value = yield item
            except Exception as exc:
                error = exc
    finally:
        generator.close()
