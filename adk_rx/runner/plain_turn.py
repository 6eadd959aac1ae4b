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

Where the generator waits for an Observable that answers later (a model on another thread,
a tool on the I/O pool) the driver subscribes it itself and goes on from its completion, still
as plain calls (:class:`~adk_rx.rx._engine.written_steps.WrittenSteps`); once an append has to
wait, a ``concat_map_direct`` sink stores the rest in order, as the generic body's writer does.
Disposal stops the loop before the next event and closes the generator; an error of the
generator fails the invocation as the generic path's would.
"""

from __future__ import annotations

from typing import Any

from reactivex import abc

from adk_rx.agents.llm import LlmAgent
from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.flows.light_event import CHUNK_EVENT
from adk_rx.flows.llm_loop import llm_steps
from adk_rx.runner.request import TurnRequest
from adk_rx.runner.services import TurnServices
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.rx._engine.written_steps import StepsOwner, WrittenSteps

__all__ = ["plain_turn"]

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
    chain: StageChain,
    observer: abc.ObserverBase[Event],
    owner: StepsOwner,
) -> WrittenSteps[Event] | None:
    """The driver of ``agent``'s turn as ``chain``'s body when the generic body would add
    nothing, else None: run it to emit each event to ``observer.on_next``, then
    ``owner.steps_done(None)`` at the end (an error goes to ``owner.steps_failed``)."""
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
        or chain.state is not RunState.RUNNING
    ):
        return None
    return WrittenSteps(
        # As agent.run_async: the agent's own context, then its steps (no callbacks).
        llm_steps(agent, agent._own_context(ctx)),  # pyright: ignore[reportPrivateUsage]
        writer,
        observer,
        owner,
        CHUNK_EVENT,
        agent._save_output if agent.output_key is not None else None,  # pyright: ignore[reportPrivateUsage]
    )
