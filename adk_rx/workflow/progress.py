"""A workflow's progress in the event log (resumable apps): a record per node start and end.

Each is an event of the workflow with ``actions.agent_state``::

    {"workflow": "wf@1", "node": "b", "run_id": "1", "status": "running"}
    {"workflow": "wf@1", "node": "b", "run_id": "1", "status": "completed",
     "output": ..., "route": ..., "branch": "b@1"}

(``"waiting"`` instead of ``"completed"`` for a run that paused on a long-running call).
A resumed invocation plays the completed runs back into its schedule, in the order they
were stored, so no finished node runs again; a node that had started and not finished runs
again (an agent node goes on from its own stored events: ``adk_rx.resumability``). A
start record also tells the resume log that the node's agent runs afresh.

google-adk 2.13 stores a snapshot of every node's status instead; the output of a node is
kept here in its end record so a resume needs no other event.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from adk_rx.context import InvocationContext
from adk_rx.events import Event, EventActions
from adk_rx.resumability.log import NODE_KEY
from adk_rx.workflow.context import Done
from adk_rx.workflow.schedule import Start

__all__ = ["completed_runs", "end_record", "start_record"]

_WORKFLOW = "workflow"


def _record(ctx: InvocationContext, author: str, state: dict[str, Any]) -> Event:
    return Event(
        author=author,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        actions=EventActions(agent_state=state),
    )


def start_record(ctx: InvocationContext, author: str, path: str, start: Start) -> Event:
    """The event recording that a node run starts."""
    return _record(
        ctx,
        author,
        {_WORKFLOW: path, NODE_KEY: start.name, "run_id": start.run_id, "status": "running"},
    )


def end_record(ctx: InvocationContext, author: str, path: str, done: Done) -> Event:
    """The event recording how a node run ended (its output, route and branch)."""
    state: dict[str, Any] = {
        _WORKFLOW: path,
        NODE_KEY: done.name,
        "run_id": done.run_id,
        "status": "waiting" if done.waiting else "completed",
    }
    if not done.waiting:
        state["output"] = to_jsonable_python(done.output, fallback=str)
        state["route"] = done.route
        state["branch"] = done.branch
    return _record(ctx, author, state)


def completed_runs(ctx: InvocationContext, author: str, path: str) -> Iterator[Mapping[str, Any]]:
    """The end records of completed runs of the workflow at ``path`` in this invocation."""
    for event in ctx.session.events:
        if event.invocation_id != ctx.invocation_id or event.author != author:
            continue
        state = event.actions.agent_state
        if state and state.get(_WORKFLOW) == path and state.get("status") == "completed":
            yield state
