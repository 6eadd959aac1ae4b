"""Structured output: an agent whose final answer must be JSON of ``output_schema``.

How the schema reaches the model (decided per request by :func:`apply_output_schema`):

* an agent without tools: the request's config asks for ``application/json`` with the
  schema in ``response_json_schema`` (providers translate it; OpenAI-compatible servers get
  ``response_format`` of type ``json_schema``);
* an agent with tools: the config stays free (most models cannot mix tools and a response
  schema); the agent gets the ``set_model_response`` tool, whose parameters are the schema,
  and a call to it ends the turn with a final event whose text is the JSON.

The final answer is validated (:func:`structured_flow`)::

    flow:     ...e1...final(bad)|                      (first attempt)
    repair:                      ...final(good)|       (the request carries the error)
    output:   ...e1...final(bad)...final(good, state_delta[output_key]=value)|

A second answer that does not validate is emitted (so it is stored) and the stream errors
with :class:`~adk_rx.errors.OutputSchemaError`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pydantic
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.errors import OutputSchemaError
from adk_rx.events import Event
from adk_rx.rx import sync

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.models.llm_request import LlmRequest

__all__ = [
    "SET_MODEL_RESPONSE",
    "apply_output_schema",
    "schema_adapter",
    "structured_flow",
    "validate_output",
]

SET_MODEL_RESPONSE = "set_model_response"
"""The name of the tool an agent with tools and an output schema answers through."""

_REPAIR_KEY = "__adk_rx_output_repair__:"
_SCHEMA_ERROR = "adk_rx.output_schema_error"


@lru_cache(maxsize=256)
def schema_adapter(schema: Any) -> pydantic.TypeAdapter[Any]:
    """The (cached) pydantic adapter of an output schema."""
    return pydantic.TypeAdapter(schema)


def json_schema(schema: Any) -> dict[str, Any]:
    """The JSON schema of ``schema`` as pydantic writes it."""
    return schema_adapter(schema).json_schema()


def validate_output(schema: Any, text: str) -> Any:
    """The JSON value of ``text`` validated against ``schema``.

    A Markdown code fence around the JSON is tolerated (models add one often).

    Raises:
        pydantic.ValidationError: the text is not JSON of the schema.
    """
    adapter = schema_adapter(schema)
    value = adapter.validate_json(_unfenced(text))
    return adapter.dump_python(value, mode="json")


def _unfenced(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        newline = body.find("\n")
        return body[newline + 1 :] if newline >= 0 else body
    return stripped


def uses_response_tool(agent: LlmAgent) -> bool:
    """True when the agent answers through ``set_model_response`` (it has tools)."""
    return agent.output_schema is not None and (
        bool(agent.tools) or bool(agent.toolsets) or bool(agent.transfer_targets())
    )


def apply_output_schema(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """Puts the schema in the request's config (no tools) and any pending repair note."""
    schema = agent.output_schema
    if schema is None:
        return
    if not uses_response_tool(agent):
        request.config.response_mime_type = "application/json"
        request.config.response_json_schema = json_schema(schema)
    note = ctx.shared.callback_data.get(_REPAIR_KEY + agent.name)
    if note:
        request.contents.append(
            types.Content(role="user", parts=[types.Part(text=note)]),
        )


def structured_flow(agent: LlmAgent, ctx: InvocationContext) -> Observable[Event]:
    """The agent's LLM flow with its final answer validated, repaired once, and saved."""
    from adk_rx.flows.llm_loop import run_llm_flow

    def attempt(repairing: bool) -> Observable[Event]:
        return run_llm_flow(agent, ctx).pipe(
            ops.concat_map(lambda event: _checked(agent, ctx, event, repairing))
        )

    return attempt(False).pipe(ops.finally_action(lambda: _forget_repair(agent, ctx)))


def _forget_repair(agent: LlmAgent, ctx: InvocationContext) -> None:
    ctx.shared.callback_data.pop(_REPAIR_KEY + agent.name, None)


def _checked(
    agent: LlmAgent, ctx: InvocationContext, event: Event, repairing: bool
) -> Observable[Event]:
    if event.author != agent.name or event.partial:
        return sync.just(event)
    answer = _response_tool_answer(event)
    if answer is not None:
        return sync.items([event, _final_event(agent, ctx, event, answer)])
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
        ctx.shared.callback_data[_REPAIR_KEY + agent.name] = (
            "Your previous answer does not fit the required JSON schema: "
            f"{problem}. Answer again with only a JSON value that fits the schema."
        )
        from adk_rx.flows.llm_loop import run_llm_flow

        repair = run_llm_flow(agent, ctx).pipe(
            ops.concat_map(lambda e: _checked(agent, ctx, e, True))
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


def _final_event(agent: LlmAgent, ctx: InvocationContext, after: Event, value: Any) -> Event:
    text = json.dumps(value, ensure_ascii=False)
    event = Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )
    return _with_output(agent, event, value)
