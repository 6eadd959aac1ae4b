"""Building the model request of one step: config, instructions, contents, tools.

The request is built synchronously when every part is (plain-string instructions, tools
that declare themselves); an instruction provider or a tool that needs I/O makes it
asynchronous without changing the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext, ToolContext
from adk_rx.flows.code_execution import prepare_code_request
from adk_rx.flows.contents import build_contents
from adk_rx.flows.instructions import inject_state, resolve_instruction
from adk_rx.flows.output_schema import apply_output_schema
from adk_rx.flows.request_layout import lay_out_request
from adk_rx.flows.transfer import transfer_instruction
from adk_rx.models.llm_request import LlmRequest, empty_config
from adk_rx.rx._engine.sync import just
from adk_rx.tools.toolset import toolset_tools

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.tools.base import BaseTool

__all__ = ["build_request"]


def _is_plain(instruction: Any) -> bool:
    return isinstance(instruction, str) and "artifact." not in instruction


def _instruction_sources(agent: LlmAgent) -> list[Any]:
    sources: list[Any] = []
    global_instruction = agent.canonical_global_instruction()
    if global_instruction:
        sources.append(global_instruction)
    if agent.instruction:
        sources.append(agent.instruction)
    return sources


def _identity(agent: LlmAgent) -> str:
    text = f'You are an agent. Your internal name is "{agent.name}".'
    if agent.description:
        text += f' The description about you is "{agent.description}".'
    return text


def _config(agent: LlmAgent) -> types.GenerateContentConfig:
    base = agent.generate_content_config
    if base is None:
        return empty_config()
    # Tools and the system instruction are rebuilt per request; never touch the agent's copy.
    return base.model_copy(deep=bool(base.tools))


def build_request(agent: LlmAgent, ctx: InvocationContext) -> Observable[LlmRequest]:
    """The next request of ``agent``, built now: a SyncObservable of it when nothing needed
    I/O, else a Single that finishes it (an error building it errors the stream)."""
    try:
        return _build(agent, ctx)
    except Exception as exc:
        return rx.throw(exc)


def _build(agent: LlmAgent, ctx: InvocationContext) -> Observable[LlmRequest]:
    request = LlmRequest(model=agent.canonical_model.model, config=_config(agent))
    sources = _instruction_sources(agent)
    targets = agent.transfer_targets()
    extra = [_identity(agent)]
    if targets:
        extra.append(transfer_instruction(agent, targets))
    request.contents = build_contents(ctx.session, agent.name, ctx.branch, agent.include_contents)
    if agent.code_executor is not None:
        prepare_code_request(agent, request)
    apply_output_schema(agent, ctx, request)
    if all(_is_plain(s) for s in sources):
        texts = [inject_state(s, ctx.session.state, agent.name) for s in sources]
        lay_out_request(agent, ctx, request, texts, extra)
        pending = _apply_tools(agent, ctx, request)
        return just(request) if pending is None else pending
    return rx.concat(*(resolve_instruction(s, ctx) for s in sources)).pipe(
        ops.to_list(),
        ops.flat_map(lambda texts: _finish(agent, ctx, request, texts, extra)),
    )


def _finish(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest, texts: list[str], extra: list[str]
) -> Observable[LlmRequest]:
    lay_out_request(agent, ctx, request, texts, extra)
    pending = _apply_tools(agent, ctx, request)
    return just(request) if pending is None else pending


def _apply_tools(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest
) -> Observable[LlmRequest] | None:
    """Lets each tool adjust the request; None when all of them did so synchronously."""
    tools = agent.canonical_tools(ctx)
    if agent.toolsets:
        return toolset_tools(agent, ctx).pipe(
            ops.flat_map(lambda found: _declare(ctx, request, [*tools, *found]) or just(request))
        )
    return _declare(ctx, request, tools)


def _declare(
    ctx: InvocationContext, request: LlmRequest, tools: list[BaseTool]
) -> Observable[LlmRequest] | None:
    if not tools:
        return None
    tool_context = ToolContext(ctx)
    pending: list[Observable[Any]] = []
    for tool in tools:
        result = tool.process_llm_request(tool_context=tool_context, llm_request=request)
        if result is not None:
            pending.append(result)
    if not pending:
        return None
    return rx.concat(*pending).pipe(ops.ignore_elements(), ops.concat(just(request)))
