"""Continuing an LlmAgent where a stopped invocation left it.

The agent's events stored in its unfinished run (from :class:`~adk_rx.resumability.log.ResumeLog`)
decide what happens first; then the ordinary step loop goes on:

* no events: the agent had not started; it runs as usual;
* a final response: it had finished (only its ``end_of_agent`` was missing): nothing runs;
* a transfer: the target agent is resumed (it is skipped if it had finished);
* function calls whose responses are stored: nothing is executed again, the next model call
  is made with them;
* a long-running call still unanswered: the agent stays paused, nothing runs;
* calls without a stored response (the process died or the run was stopped while the tool
  ran): a tool that declares itself idempotent (``BaseTool.is_idempotent``) runs again,
  any other call is answered ``{"error": "interrupted"}``, so no model ever sees a call
  without its response and no side effect is repeated behind the user's back;
* anything else (the last response was stored, the model call after it was not): the next
  model call is made again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.flows.functions import handle_function_calls
from adk_rx.flows.llm_loop import run_llm_flow
from adk_rx.rx._engine import sync

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["INTERRUPTED", "interrupted_event", "resume_llm_flow"]

INTERRUPTED = "interrupted"
"""The error text of the response stored for a call whose tool may not run twice (the same
answer the Runner stores for any call a crash left unanswered, ``adk_rx.runner.dangling``)."""


def interrupted_event(
    agent_name: str, ctx: InvocationContext, calls: Sequence[types.FunctionCall]
) -> Event:
    """One function-response event answering ``calls`` with ``{"error": "interrupted"}``."""
    return Event(
        author=agent_name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response={"error": INTERRUPTED}
                    )
                )
                for call in calls
            ],
        ),
    )


def resume_llm_flow(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event] | None:
    """The resumed run of ``agent``, or None when it simply runs as usual."""
    log = ctx.resume
    if log is None:
        return None
    own = log.take_events(agent.name)
    if not own:
        return None
    last = own[-1]
    fresh = ctx.copy(resume=None)
    target_name = last.actions.transfer_to_agent
    if target_name:
        target = agent.root_agent.find_agent(target_name)
        return target.run_async(ctx) if target is not None else sync.empty()
    calls = last.get_function_calls()
    if not calls:
        if last.is_final_response():
            return sync.empty()
        return run_llm_flow(agent, fresh)
    missing = [call for call in calls if call.id not in log.answered]
    if any(call.id in (last.long_running_tool_ids or ()) for call in missing):
        return sync.empty()  # still waiting for a long-running call's answer
    if not missing:
        return run_llm_flow(agent, fresh)
    tools = agent.tools_by_name(fresh)
    again = [c for c in missing if getattr(tools.get(c.name or ""), "is_idempotent", False)]
    refused = [c for c in missing if c not in again]
    repaired: list[Observable[Event]] = []
    if refused:
        repaired.append(sync.just(interrupted_event(agent.name, fresh, refused)))
    if again:
        repaired.append(rx.defer(lambda _: handle_function_calls(agent, fresh, again, tools)))
    last_event: list[Event | None] = [None]

    def remember(event: Event) -> None:
        last_event[0] = event

    def go_on(_: object) -> Observable[Event]:
        done = last_event[0]
        if done is not None and (done.actions.skip_summarization or fresh.cancelled):
            return sync.empty()
        return run_llm_flow(agent, fresh)

    return rx.concat(*repaired).pipe(ops.do_action(remember), ops.concat(rx.defer(go_on)))
