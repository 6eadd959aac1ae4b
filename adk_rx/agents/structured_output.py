"""Structured output: an LlmAgent whose final answer must be JSON of ``output_schema``.

How the schema reaches the model is the request's business (:mod:`adk_rx.flows.output_schema`);
here the final answer is validated, repaired once, and saved (:func:`structured_flow`)::

    flow:     ...e1...final(bad)|                      (first attempt)
    repair:                      ...final(good)|       (the request carries the error)
    output:   ...e1...final(bad)...final(good, state_delta[output_key]=value)|

A second answer that does not validate is emitted (so it is stored) and the stream errors
with :class:`~adk_rx.errors.OutputSchemaError`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pydantic
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.errors import OutputSchemaError
from adk_rx.events import Event
from adk_rx.flows.llm_loop import run_llm_flow
from adk_rx.flows.output_schema import forget_repair_note, set_repair_note
from adk_rx.rx._engine import sync
from adk_rx.tools.output_schema import SET_MODEL_RESPONSE, validate_output

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["structured_flow"]

_SCHEMA_ERROR = "adk_rx.output_schema_error"


def structured_flow(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event]:
    """The agent's LLM flow with its final answer validated, repaired once, and saved."""
    flow = run_llm_flow(agent, ctx).pipe(
        ops.concat_map(lambda event: _checked(agent, ctx, event, repairing=False))
    )
    return flow.pipe(ops.finally_action(lambda: forget_repair_note(ctx, agent.name)))


def _checked(
    agent: LlmAgent, ctx: InvocationContext, event: Event, *, repairing: bool
) -> Observable[Event]:
    if event.author != agent.name or event.partial:
        return sync.just(event)
    answer = _response_tool_answer(event)
    if answer is not None:
        return sync.items([event, _final_event(agent, ctx, answer)])
    if not event.is_final_response() or event.content is None:
        return sync.just(event)
    text = event.text()
    if not text:
        return sync.just(event)
    try:
        value = validate_output(agent.output_schema, text)
    except pydantic.ValidationError as exc:
        problem = _problems(exc)
        metadata = {**(event.custom_metadata or {}), _SCHEMA_ERROR: problem}
        marked = event.replace(custom_metadata=metadata)
        if repairing:
            error = OutputSchemaError(
                f"the final answer of agent {agent.name!r} does not fit its output_schema "
                f"after one repair round: {problem}"
            )
            return sync.just(marked).pipe(ops.concat(rx.throw(error)))
        set_repair_note(
            ctx,
            agent.name,
            "Your previous answer does not fit the required JSON schema: "
            f"{problem}. Answer again with only a JSON value that fits the schema.",
        )
        repair = run_llm_flow(agent, ctx).pipe(
            ops.concat_map(lambda e: _checked(agent, ctx, e, repairing=True))
        )
        return sync.just(marked).pipe(ops.concat(repair))
    return sync.just(_with_output(agent, event, value))


def _problems(exc: pydantic.ValidationError) -> str:
    parts = []
    for detail in exc.errors(include_url=False):
        where = ".".join(str(p) for p in detail["loc"]) or "value"
        parts.append(f"{where}: {detail['msg']}")
    return "; ".join(parts)


def _with_output(agent: LlmAgent, event: Event, value: Any) -> Event:
    if agent.output_key is None:
        return event
    actions = event.actions.replace(
        state_delta={**event.actions.state_delta, agent.output_key: value}
    )
    return event.replace(actions=actions)


def _response_tool_answer(event: Event) -> Any:
    """The validated value a ``set_model_response`` call answered, or None."""
    for response in event.get_function_responses():
        if response.name == SET_MODEL_RESPONSE:
            body = response.response or {}
            if "error" not in body and "result" in body:
                return body["result"]
    return None


def _final_event(agent: LlmAgent, ctx: InvocationContext, value: Any) -> Event:
    text = json.dumps(value, ensure_ascii=False)
    event = Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )
    return _with_output(agent, event, value)
