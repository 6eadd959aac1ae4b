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
from adk_rx.flows.contents import build_contents
from adk_rx.flows.instructions import inject_state, resolve_instruction
from adk_rx.flows.transfer import transfer_instruction, transfer_targets
from adk_rx.models.llm_request import LlmRequest

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["build_request"]


def _is_plain(instruction: Any) -> bool:
    return isinstance(instruction, str) and "artifact." not in instruction


def _instruction_sources(agent: LlmAgent) -> list[Any]:
    from adk_rx.agents.llm import LlmAgent

    root = agent.root_agent
    sources: list[Any] = []
    if isinstance(root, LlmAgent) and root.global_instruction:
        sources.append(root.global_instruction)
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
        return types.GenerateContentConfig()
    # Tools and the system instruction are rebuilt per request; never touch the agent's copy.
    return base.model_copy(deep=bool(base.tools))


def build_request(agent: LlmAgent, ctx: InvocationContext) -> Observable[LlmRequest]:
    """A cold Single of the next request of ``agent``."""

    def build(_: Any) -> Observable[LlmRequest]:
        request = LlmRequest(model=agent.canonical_model.model, config=_config(agent))
        sources = _instruction_sources(agent)
        targets = transfer_targets(agent)
        extra = [_identity(agent)]
        if targets:
            extra.append(transfer_instruction(agent, targets))
        request.contents = build_contents(
            ctx.session, agent.name, ctx.branch, agent.include_contents
        )
        if all(_is_plain(s) for s in sources):
            texts = [inject_state(s, ctx.session.state, agent.name) for s in sources]
            request.append_instructions([*texts, *extra])
            return _apply_tools(agent, ctx, request)
        return rx.concat(*(resolve_instruction(s, ctx) for s in sources)).pipe(
            ops.to_list(),
            ops.flat_map(lambda texts: _finish(agent, ctx, request, [*texts, *extra])),
        )

    return rx.defer(build)


def _finish(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest, texts: list[str]
) -> Observable[LlmRequest]:
    request.append_instructions(texts)
    return _apply_tools(agent, ctx, request)


def _apply_tools(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest
) -> Observable[LlmRequest]:
    tools = agent.canonical_tools(ctx)
    if not tools:
        return rx.just(request)
    tool_context = ToolContext(ctx)
    pending: list[Observable[Any]] = []
    for tool in tools:
        result = tool.process_llm_request(tool_context=tool_context, llm_request=request)
        if result is not None:
            pending.append(result)
    if not pending:
        return rx.just(request)
    return rx.concat(*pending).pipe(ops.ignore_elements(), ops.concat(rx.just(request)))
