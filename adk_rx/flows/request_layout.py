"""Where a request's instructions go, the planner's part in it, and the app's caching.

Without a ``static_instruction`` the system instruction is, as before: the global
instruction, the instruction (both templated from state), the agent's identity, its transfer
instruction, and the planner's instruction. With one, the request keeps what changes out of
its stable prefix (:mod:`adk_rx.models.context_cache`), as google-adk does::

    system:    static instruction (never templated) | identity | transfer | planning
    contents:  history ... | [this turn's instruction, templated] | the new user message(s)

The templated instructions travel as a user content placed before the last run of user
messages (after the function responses of a step that continues a call), labelled as
instructions, so the system instruction, the tools and the history stay byte for byte the
same from one request to the next and a provider can cache them.

The planner (``LlmAgent(planner=...)``): a :class:`~adk_rx.planners.BuiltInPlanner` sets the
thinking config; any other adds its instruction and sends earlier thoughts back as plain text
(they were its own planning, marked as thoughts when they arrived). :func:`planned_content`
lets it rewrite each response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from adk_rx.context import CallbackContext, InvocationContext, ReadonlyContext
from adk_rx.models.llm_request import LlmRequest
from adk_rx.planners import BasePlanner, BuiltInPlanner

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["DYNAMIC_INSTRUCTION_LABEL", "lay_out_request", "planned_content"]

DYNAMIC_INSTRUCTION_LABEL = (
    "[Instructions for this turn, from the application, not from the user. Follow them; "
    "do not answer them.]"
)


def lay_out_request(
    agent: LlmAgent,
    ctx: InvocationContext,
    request: LlmRequest,
    templated: list[str],
    fixed: list[str],
) -> None:
    """Adds the instructions, the planner's settings and the cache config to ``request``.

    Args:
        agent: the agent whose request it is.
        ctx: its context.
        request: the request, with its contents.
        templated: the instructions made from state this turn (global, then the agent's).
        fixed: what depends on the agent alone (identity, transfer instruction).
    """
    planner = agent.planner
    planning = None
    # (isinstance against the planners' ABC is a Python-level check: asked only with one.)
    if planner is not None and not isinstance(planner, BuiltInPlanner):
        planning = planner.build_planning_instruction(ReadonlyContext(ctx), request)
    tail = [*fixed, planning] if planning else fixed
    static = agent.static_instruction
    if static is None:
        request.append_instructions([*templated, *tail])
    else:
        request.append_instructions([static, *tail])
        dynamic = "\n\n".join(t for t in templated if t)
        if dynamic:
            _insert_before_user_turn(request.contents, f"{DYNAMIC_INSTRUCTION_LABEL}\n\n{dynamic}")
    if planner is None:
        pass
    elif isinstance(planner, BuiltInPlanner):
        planner.apply_thinking_config(request)
    else:
        request.contents = [_without_thoughts(c) for c in request.contents]
    request.cache_config = ctx.services.context_cache_config


def _insert_before_user_turn(contents: list[types.Content], text: str) -> None:
    index = len(contents)
    while index and contents[index - 1].role == "user":
        parts = contents[index - 1].parts or []
        if any(p.function_response is not None for p in parts):
            break  # a step that continues a call: the instruction goes after its answers
        index -= 1
    contents.insert(index, types.Content(role="user", parts=[types.Part(text=text)]))


def _without_thoughts(content: types.Content) -> types.Content:
    # A copy: the content is the stored event's.
    parts = content.parts or []
    if not any(p.thought for p in parts):
        return content
    plain = [p.model_copy(update={"thought": None}) if p.thought else p for p in parts]
    return content.model_copy(update={"parts": plain})


def planned_content(
    planner: BasePlanner, ctx: InvocationContext, content: types.Content
) -> types.Content:
    """``content`` as the planner rewrites it (a BuiltInPlanner leaves it as it is)."""
    if isinstance(planner, BuiltInPlanner) or not content.parts:
        return content
    parts = planner.process_planning_response(CallbackContext(ctx), list(content.parts))
    if parts is None:
        return content
    return content.model_copy(update={"parts": parts})
