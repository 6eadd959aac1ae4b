"""Building the model request of one step: config, instructions, contents, tools.

The request is built synchronously when every part is (plain-string instructions, tools
that declare themselves); an instruction provider or a tool that needs I/O makes it
asynchronous without changing the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext, ToolContext
from adk_rx.flows.code_execution import prepare_code_request
from adk_rx.flows.contents import build_contents
from adk_rx.flows.instructions import inject_state, resolve_instruction
from adk_rx.flows.output_schema import apply_output_schema
from adk_rx.flows.request_layout import lay_out_request
from adk_rx.flows.transfer import transfer_instruction
from adk_rx.models.llm_request import LlmRequest
from adk_rx.rx._engine.sync import SyncObservable, just
from adk_rx.tools.base import BaseTool
from adk_rx.tools.toolset import toolset_tools

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["build_request"]

_DECLARE_ONLY = BaseTool.process_llm_request


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


class _Fixed:
    """What an agent's requests take from the agent tree alone, made once per agent and
    place in its tree, then reused by every step.

    Attributes:
        sources: the global instruction and the instruction, as given.
        plain: every source is a string that needs no I/O to resolve.
        untemplated: every source is a string without placeholders: used as it is.
        extra: the agent's identity and transfer instructions.
    """

    __slots__ = ("extra", "parent", "plain", "root", "sources", "untemplated")

    def __init__(self, agent: LlmAgent, parent: object, root: object) -> None:
        self.parent = parent
        self.root = root
        self.sources = _instruction_sources(agent)
        self.plain = all(_is_plain(s) for s in self.sources)
        self.untemplated = self.plain and not any("{" in s or "}" in s for s in self.sources)
        extra = [_identity(agent)]
        targets = agent.transfer_targets()
        if targets:
            extra.append(transfer_instruction(agent, targets))
        self.extra = extra


def _fixed(agent: LlmAgent) -> _Fixed:
    made: _Fixed | None = agent.__dict__.get("_fixed_request")
    parent = agent.parent_agent
    root = agent.root_agent  # the global instruction is the root's
    if made is not None and made.parent is parent and made.root is root:
        return made
    made = _Fixed(agent, parent, root)
    object.__setattr__(agent, "_fixed_request", made)
    return made


def build_request(agent: LlmAgent, ctx: InvocationContext) -> Observable[LlmRequest]:
    """The next request of ``agent``, built now: a SyncObservable of it when nothing needed
    I/O, else a Single that finishes it (an error building it errors the stream)."""
    try:
        contents = build_contents(ctx.session, agent.name, ctx.branch, agent.include_contents)
        model = agent._resolved_model or agent.canonical_model  # pyright: ignore[reportPrivateUsage]
        request = LlmRequest.deferred(model.model, contents, agent.generate_content_config)
        fixed = _fixed(agent)
        sources, extra = fixed.sources, fixed.extra
        if agent.code_executor is not None:
            prepare_code_request(agent, request)
        if agent.output_schema is not None:
            apply_output_schema(agent, ctx, request)
        if fixed.plain:
            if fixed.untemplated:
                texts = sources
            else:
                texts = [inject_state(s, ctx.session.state, agent.name) for s in sources]
            lay_out_request(agent, ctx, request, texts, extra)
            pending = _apply_tools(agent, ctx, request)
            return SyncObservable((request,)) if pending is None else pending
        return rx.concat(*(resolve_instruction(s, ctx) for s in sources)).pipe(
            ops.to_list(),
            ops.flat_map(lambda texts: _finish(agent, ctx, request, texts, extra)),
        )
    except Exception as exc:
        return rx.throw(exc)


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
    tool_context: ToolContext | None = None
    pending: list[Observable[Any]] = []
    plain: list[BaseTool] = []  # tools that only declare themselves, declared in one go
    for tool in tools:
        if type(tool).process_llm_request is _DECLARE_ONLY:
            plain.append(tool)
            continue
        if plain:
            request.append_tools(plain)
            plain = []
        if tool_context is None:
            tool_context = ToolContext(ctx)
        result = tool.process_llm_request(tool_context=tool_context, llm_request=request)
        if result is not None:
            pending.append(result)
    if plain:
        request.append_tools(plain)
    if not pending:
        return None
    return rx.concat(*pending).pipe(ops.ignore_elements(), ops.concat(just(request)))
