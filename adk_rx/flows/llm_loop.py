"""The LLM loop: steps of preprocess -> call the model -> postprocess -> run functions.

    run_llm_flow:  step 1 events ... | step 2 events ... | ... (lazy; next step only after)

A step ends with the events of one model call: the model's event(s), then (if it called
functions) an optional confirmation request and the merged function-response event, then,
if an event asks for a transfer, the whole run of the target agent. The loop goes on while
the step's last event is not a final response; the next step starts only after the
previous one ended, so it sees every event of the previous step applied to the session.

The loop is a generator run by :func:`~adk_rx.rx._engine.generator_stage.from_generator`: while the
model answers at once and tools run inline, a whole turn is plain calls on the subscribing
thread, and only an asynchronous model call or tool is subscribed as an Observable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactivex import Observable

from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.flows.llm_step import step_events
from adk_rx.rx._engine.generator_stage import Steps, from_generator

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["llm_steps", "run_llm_flow"]


def run_llm_flow(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event]:
    """The agent's steps until a final response, ``end_of_agent`` or ``max_steps``."""
    return from_generator(lambda: llm_steps(agent, ctx))


def llm_steps(agent: LlmAgent, ctx: InvocationContext) -> Steps[Event]:
    """The generator :func:`run_llm_flow` runs (a Runner may drive it itself)."""
    max_steps = agent.max_steps
    taken = 0
    while True:
        last = yield from step_events(agent, ctx)
        taken += 1
        if (
            last is None
            or last.is_final_response()
            or last.actions.end_of_agent
            or (agent.mode == "task" and agent._finished_task(last))  # pyright: ignore[reportPrivateUsage]
            # This agent's escalation ended an enclosing LoopAgent: the loop's take_while cannot
            # stop a step that runs as plain calls before its subscription returns, so no
            # further model call starts here (an agent around the loop goes on).
            or (
                last.actions.escalate
                and last.author == agent.name
                and last.id in ctx.shared.loop_exits
            )
            or ctx.end_invocation
            or ctx.shared.cancelled
            or (max_steps is not None and taken >= max_steps)
        ):
            return
