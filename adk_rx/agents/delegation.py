"""Delegation modes (google-adk 2.13's ``LlmAgent(mode=...)``): a sub-agent called as a tool,
inline and in view.

A parent LlmAgent gets one tool per sub-agent in ``single_turn`` or ``task`` mode, named after
it (arguments: ``{"request": str}``, or the sub-agent's ``input_schema``); such sub-agents are
no ``transfer_to_agent`` targets. A call runs the sub-agent in the parent's invocation, on
the delegation's branch ``<agent>@<call id>`` (``adk_rx.flows.delegated``: it sees its request
and its branch, the parent does not see them), and its events are stored in the session as
they happen (they travel on the call's progress sink)::

    parent:  --call(helper)--------------------------------response--answer|
    helper:                --h1--h2(final text)|
    single_turn: response = {"result": final text} (or the output_schema value)

    task, turn 1:  --call(helper)--h1--"what detail?"|           (the call stays open)
    task, turn 2:  --user--"detail is 42"..--finish_task(args)--finish_task response(output)
                   --response(parent's call: output)--parent's answer|

A task agent (``finish_task.py``) talks with the user over as many turns as it needs; each
later turn goes to it (it spoke last) and runs on its delegation's branch; when its
``finish_task`` call succeeds, its arguments are the task's output, the parent's call is
answered with it and the parent goes on in the same invocation.

Where adk_rx differs from google-adk: the response to the parent's call is authored by the
parent (google-adk authors it ``"user"``), as every function response of an adk_rx agent is;
a task's later turns are routed by the usual rule (the agent that spoke last) rather than by
an isolation scope stored on the user's message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from pydantic import BaseModel, ValidationError
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.call import NodeCall
from adk_rx.agents.finish_task import FINISH_TASK, task_output, task_result
from adk_rx.agents.request_input import to_user_content, with_request
from adk_rx.context import InvocationContext, ToolContext
from adk_rx.events import Event
from adk_rx.flows.delegated import delegated_branch, delegated_call
from adk_rx.tools.base import BaseTool, tool_result_dict

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["DelegatedAgentTool", "open_delegation", "task_turn"]

_REQUEST_SCHEMA = {
    "type": "object",
    "properties": {"request": {"type": "string"}},
    "required": ["request"],
}


class DelegatedAgentTool(BaseTool):
    """The tool through which a parent calls its ``single_turn`` or ``task`` sub-agent.

    Args:
        agent: the sub-agent (its ``mode`` decides how the call ends).
    """

    def __init__(self, agent: LlmAgent) -> None:
        schema = agent.input_schema
        parameters = schema.model_json_schema() if schema is not None else _REQUEST_SCHEMA
        description = agent.description
        if agent.mode == "task":
            description = (
                f"{description}\nIMPORTANT: This tool delegates execution to a specialized "
                "agent. Do NOT call this tool in parallel with any other tools."
            ).strip()
        super().__init__(
            name=agent.name,
            description=description,
            parameters=parameters,
            is_long_running=agent.mode == "task",
        )
        self.agent = agent
        self.reports_progress = True  # the sub-agent's events travel on the progress sink

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Runs the sub-agent's turn; emits its answer (None while a task goes on)."""
        schema = self.agent.input_schema
        if schema is not None:
            try:
                request: Any = schema.model_validate(dict(args)).model_dump()
            except ValidationError as exc:
                return rx.just({"error": f"Error validating input: {exc}"})
        elif self.agent.mode == "task":
            request = dict(args)
        else:
            request = args.get("request")
        return rx.defer(lambda _: self._run(tool_context, request))

    def _run(self, tool_context: ToolContext, request: Any) -> Observable[Any]:
        caller = tool_context.invocation_context
        call_id = tool_context.function_call_id or ""
        branch = delegated_branch(caller.branch, self.agent.name, call_id)
        finished: list[Any] = []
        last: list[Event] = []

        def forward(event: Event) -> None:
            last[:] = [event]
            tool_context.report_progress(event)

        def answer(_: Any) -> Any:
            if self.agent.mode == "task":
                return _response(finished[0]) if finished else None  # None: it goes on
            event = last[0] if last else None
            return _single_turn_answer(self.agent, event)

        run = _delegated_run(self.agent, caller, branch, request, finished)
        return run.pipe(ops.do_action(forward), ops.to_list(), ops.map(answer))


def _single_turn_answer(agent: LlmAgent, event: Event | None) -> dict[str, Any]:
    text = event.text() if event is not None and not event.get_function_calls() else ""
    if agent.output_schema is not None and text.strip():
        try:
            return tool_result_dict(json.loads(text))
        except ValueError:
            pass
    return {"result": text}


def _response(output: Any) -> dict[str, Any]:
    if isinstance(output, BaseModel):
        output = output.model_dump()
    return output if isinstance(output, dict) else {"result": output}


def _delegated_run(
    agent: LlmAgent,
    caller: InvocationContext,
    branch: str,
    request: Any,
    finished: list[Any],
    *,
    direct: bool = False,
) -> Observable[Event]:
    """One turn of ``agent`` on ``branch``, with ``request`` as its input; a task's turn ends
    after its ``finish_task`` succeeded (its output goes into ``finished``). ``direct``: the
    agent's steps alone (its run, callbacks included, is already going on)."""
    ctx = caller.copy(branch=branch, node_call=NodeCall(agent, "", request))
    text = request if isinstance(request, str) else json.dumps(request, default=str)
    first = Event(
        author="user",
        invocation_id=caller.invocation_id,
        content=to_user_content(text),
        branch=branch,
    )

    def position(events: list[Event]) -> int:  # before the branch's stored events, if any
        for i, event in enumerate(events):
            if event.branch == branch and event is not first:
                return i
        return len(events)

    run = agent._steps(ctx.copy(agent=agent)) if direct else agent.run_async(ctx)  # pyright: ignore[reportPrivateUsage]
    events = with_request(run, caller.session, first, position)
    if agent.mode != "task":
        return events
    pending: dict[str, Any] = {}

    def note(event: Event) -> Event:
        for call in event.get_function_calls():
            if call.name == FINISH_TASK:
                pending["args"] = dict(call.args or {})
        if "args" in pending and task_result(event):
            output = task_output(agent, pending["args"])
            finished.append(output)
            return event.replace(output=output)
        return event

    return events.pipe(
        ops.map(note),
        ops.take_while(lambda _: not finished, inclusive=True),
    )


def open_delegation(
    agent: LlmAgent, ctx: InvocationContext
) -> tuple[str, types.FunctionCall] | None:
    """(branch, the parent's call) of ``agent``'s task that is still open in the session."""
    events = ctx.session.events
    answered = {r.id for e in events for r in e.get_function_responses()}
    for event in reversed(events):
        if event.author != agent.name:
            continue
        call_id = delegated_call(event.branch)
        if call_id is None or call_id in answered:
            return None
        for earlier in events:
            for call in earlier.get_function_calls():
                if call.id == call_id:
                    return event.branch or "", call
        return None
    return None


def task_turn(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event] | None:
    """A later turn of ``agent``'s open task (the user answered it), or None when it has none:
    the agent's turn on its branch; once it finished, the parent's call answered and the
    parent's own turn."""
    found = open_delegation(agent, ctx)
    parent = agent.parent_agent
    if found is None or parent is None:
        return None
    branch, call = found
    finished: list[Any] = []
    caller_branch = branch.rsplit(".", 1)[0] if "." in branch else None
    caller = ctx.copy(branch=caller_branch, node_call=None)
    turn = _delegated_run(agent, caller, branch, dict(call.args or {}), finished, direct=True)

    def then(_: Any) -> Observable[Event]:
        if not finished:
            return rx.empty()  # the task asked the user something more
        response = Event(
            author=parent.name,
            invocation_id=ctx.invocation_id,
            branch=caller_branch,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response=_response(finished[0])
                        )
                    )
                ],
            ),
        )
        goes_on = caller.copy(node_call=NodeCall(parent, "", None))
        return rx.concat(rx.just(response), parent.run_async(goes_on))

    return turn.pipe(ops.concat(rx.defer(then)))
