"""LlmAgent: an agent driven by a model, with tools, sub-agents and callbacks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from google.genai import types
from pydantic import BaseModel
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.delegation import DelegatedAgentTool, task_turn
from adk_rx.agents.finish_task import FinishTaskTool, task_result
from adk_rx.agents.structured_output import structured_flow
from adk_rx.callbacks import as_callback_list
from adk_rx.code_executors.base import BaseCodeExecutor
from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError, InvalidAgentError
from adk_rx.events import Event
from adk_rx.flows.llm_loop import run_llm_flow
from adk_rx.flows.output_schema import uses_response_tool
from adk_rx.models.base import BaseLlm
from adk_rx.models.registry import LlmRegistry
from adk_rx.planners import BasePlanner
from adk_rx.resumability.llm_flow import resume_llm_flow
from adk_rx.tools.base import BaseTool
from adk_rx.tools.builtins import transfer_to_agent
from adk_rx.tools.function import as_tool
from adk_rx.tools.set_model_response import SetModelResponseTool
from adk_rx.tools.toolset import BaseToolset

if TYPE_CHECKING:
    from adk_rx.callback_types import (
        AfterAgentCallback,
        AfterModelCallback,
        AfterToolCallback,
        BeforeAgentCallback,
        BeforeModelCallback,
        BeforeToolCallback,
        Callbacks,
        OnModelErrorCallback,
        OnToolErrorCallback,
    )

__all__ = ["LlmAgent"]


def _delegated(agent: BaseAgent) -> bool:
    """A sub-agent called as a tool (single_turn or task mode), not transferred to."""
    return getattr(agent, "mode", None) in ("single_turn", "task")


Instruction = str | Callable[..., Any]

Mode = Literal["chat", "task", "single_turn"]
"""How an LlmAgent is delegated to (google-adk 2.13's ``mode``): see :class:`LlmAgent`."""

MODES: frozenset[str] = frozenset({"chat", "task", "single_turn"})


def _static_text(name: str, value: str | types.Content | types.Part | None) -> str | None:
    """A static instruction as its text; a part that is not text is refused."""
    if value is None or isinstance(value, str):
        return value or None
    parts = value.parts or [] if isinstance(value, types.Content) else [value]
    if not isinstance(value, types.Content | types.Part) or any(p.text is None for p in parts):
        raise InvalidAgentError(
            f"static_instruction of {name!r} must be text (a str, or a Content or Part of text)"
        )
    return "\n\n".join(p.text for p in parts if p.text) or None


class LlmAgent(BaseAgent):
    """An agent that calls a model in a loop until it gives a final answer.

    Args:
        name: identifier of the agent.
        model: a model name (resolved through LlmRegistry) or a BaseLlm; when omitted, the
            model of the nearest LlmAgent ancestor.
        description: what the agent does (other agents read it to choose a transfer).
        instruction: the system instruction, templated with ``{key}`` / ``{key?}`` from
            state, or a callable ``(ReadonlyContext) -> str`` used as returned.
        global_instruction: on the root agent: prepended to every agent's instruction.
        static_instruction: a fixed system instruction (a string, or a Content or Part of
            text), sent first and never templated. With it, ``instruction`` and
            ``global_instruction`` go to the end of the request beside the user's message,
            so the start of every request stays the same and can be cached (see
            :mod:`adk_rx.flows.request_layout`).
        planner: how the agent plans: a :class:`~adk_rx.planners.BuiltInPlanner` (the
            model's own thinking) or a :class:`~adk_rx.planners.PlanReActPlanner`.
        tools: functions, BaseTools and BaseToolsets (asked for their tools at every step).
        sub_agents: agents this one may transfer to.
        output_key: save the agent's final text (or ``output_schema`` JSON value) in this state key.
        output_schema: a pydantic model (or any type pydantic's TypeAdapter takes) the final
            answer must be JSON of; see :mod:`adk_rx.agents.structured_output`.
        input_schema: a pydantic model for the arguments when used through AgentTool.
        include_contents: ``"default"`` (the history) or ``"none"`` (only the current turn);
            when omitted, ``"none"`` for a ``single_turn`` agent and ``"default"`` otherwise.
        mode: how a parent LlmAgent delegates to this agent (google-adk 2.13): ``"chat"``
            (None, the default for a sub-agent: a ``transfer_to_agent`` target),
            ``"single_turn"`` (the parent calls it as a tool; it runs inline in the parent's
            turn on its own branch, sees only the request, and its answer is the tool's
            result) or ``"task"`` (the parent calls it as a tool; it talks with the user over
            as many turns as it needs and ends with ``finish_task``, whose result answers the
            parent's call). In a Workflow an agent without a mode runs single_turn.
        disallow_transfer_to_parent: the agent may not transfer back to its parent.
        disallow_transfer_to_peers: the agent may not transfer to its siblings.
        generate_content_config: generation settings sent with every request.
        max_steps: stop after this many model calls in one run of the agent.
        code_executor: runs the code blocks of the model's answers and sends their output
            back (google-adk's loop; see :mod:`adk_rx.code_executors`).
        before_agent_callback: before the agent runs (one callable or a list, as each hook).
        after_agent_callback: after the agent ran.
        before_model_callback: before each model call.
        after_model_callback: after each model call.
        on_model_error_callback: when a model call fails.
        before_tool_callback: before each tool call.
        after_tool_callback: after each tool call.
        on_tool_error_callback: when a tool call fails.
    """

    _list_fields: ClassVar[frozenset[str]] = frozenset({"tools", "sub_agents"})

    def __init__(
        self,
        *,
        name: str,
        model: str | BaseLlm | None = None,
        description: str = "",
        instruction: Instruction = "",
        global_instruction: Instruction = "",
        static_instruction: str | types.Content | types.Part | None = None,
        planner: BasePlanner | None = None,
        tools: Sequence[Any] | None = None,
        sub_agents: Sequence[BaseAgent] | None = None,
        output_key: str | None = None,
        output_schema: Any = None,
        input_schema: type[BaseModel] | None = None,
        include_contents: Literal["default", "none"] | None = None,
        mode: Mode | None = None,
        disallow_transfer_to_parent: bool = False,
        disallow_transfer_to_peers: bool = False,
        generate_content_config: types.GenerateContentConfig | None = None,
        max_steps: int | None = None,
        code_executor: BaseCodeExecutor | None = None,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
        before_model_callback: Callbacks[BeforeModelCallback] = None,
        after_model_callback: Callbacks[AfterModelCallback] = None,
        on_model_error_callback: Callbacks[OnModelErrorCallback] = None,
        before_tool_callback: Callbacks[BeforeToolCallback] = None,
        after_tool_callback: Callbacks[AfterToolCallback] = None,
        on_tool_error_callback: Callbacks[OnToolErrorCallback] = None,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            sub_agents=sub_agents,
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
        )
        object.__setattr__(self, "_frozen", False)
        if model is not None and not isinstance(model, str | BaseLlm):
            raise InvalidAgentError(f"model of {name!r} must be a model name or a BaseLlm")
        if include_contents not in ("default", "none", None):
            raise InvalidAgentError(
                f"include_contents must be 'default' or 'none', got {include_contents!r}"
            )
        if mode is not None and mode not in MODES:
            raise InvalidAgentError(f"mode must be 'chat', 'task' or 'single_turn', got {mode!r}")
        if generate_content_config is not None and generate_content_config.system_instruction:
            raise InvalidAgentError(
                "put the system instruction in instruction=, not in generate_content_config"
            )
        if planner is not None and not isinstance(planner, BasePlanner):
            raise InvalidAgentError(f"planner of {name!r} must be a BasePlanner, got {planner!r}")
        if code_executor is not None and not isinstance(code_executor, BaseCodeExecutor):
            raise InvalidAgentError(
                f"code_executor of {name!r} must be a BaseCodeExecutor, got {code_executor!r}"
            )
        if max_steps is not None and max_steps < 1:
            raise InvalidAgentError(f"max_steps must be >= 1, got {max_steps}")
        toolsets = tuple(t for t in tools or () if isinstance(t, BaseToolset))
        own_tools = tuple(as_tool(t) for t in tools or () if not isinstance(t, BaseToolset))
        names: set[str] = set()
        for tool in own_tools:
            if tool.name in names:
                raise InvalidAgentError(f"agent {name!r} has two tools named {tool.name!r}")
            names.add(tool.name)
        self.model = model
        self.instruction = instruction
        self.global_instruction = global_instruction
        self.static_instruction = _static_text(name, static_instruction)
        self.planner = planner
        self.tools = own_tools
        self.toolsets = toolsets
        self.output_key = output_key
        self.output_schema = output_schema
        self.input_schema = input_schema
        self.mode = mode
        self.include_contents = include_contents or ("none" if mode == "single_turn" else "default")
        self._include_contents_set = include_contents is not None
        self.disallow_transfer_to_parent = disallow_transfer_to_parent
        self.disallow_transfer_to_peers = disallow_transfer_to_peers
        self.generate_content_config = generate_content_config
        self.max_steps = max_steps
        self.code_executor = code_executor
        self.before_model_callback = as_callback_list(before_model_callback)
        self.after_model_callback = as_callback_list(after_model_callback)
        self.on_model_error_callback = as_callback_list(on_model_error_callback)
        self.before_tool_callback = as_callback_list(before_tool_callback)
        self.after_tool_callback = as_callback_list(after_tool_callback)
        self.on_tool_error_callback = as_callback_list(on_tool_error_callback)
        self._resolved_model: BaseLlm | None = model if isinstance(model, BaseLlm) else None
        self._frozen = True

    def _adopt_as_workflow_node(self) -> None:
        """A Workflow took this agent as a node. Like google-adk's copy of it, an agent with
        no mode and no sub-agents runs single_turn there, and sees only its input unless
        ``include_contents`` was given. (An agent has one parent, so setting it here is the
        copy's effect without a second agent of the same name.)"""
        if self.mode is None and not self.sub_agents:
            self._set("mode", "single_turn")
            if not self._include_contents_set:
                self._set("include_contents", "none")

    # -- model ------------------------------------------------------------------------------
    @property
    def canonical_model(self) -> BaseLlm:
        """The model this agent calls: its own, or the nearest LlmAgent ancestor's."""
        if self._resolved_model is not None:
            return self._resolved_model
        if isinstance(self.model, str):
            resolved = LlmRegistry.resolve(self.model)
            object.__setattr__(self, "_resolved_model", resolved)
            return resolved
        ancestor = self.parent_agent
        while ancestor is not None:
            if isinstance(ancestor, LlmAgent) and ancestor.model is not None:
                return ancestor.canonical_model
            ancestor = ancestor.parent_agent
        raise ConfigurationError(
            f"agent {self.name!r} has no model and no LlmAgent ancestor with one; "
            "pass model= (a name or a BaseLlm)"
        )

    # -- tools ------------------------------------------------------------------------------
    def canonical_tools(self, ctx: InvocationContext | None = None) -> list[BaseTool]:
        """The static tools the model sees (toolsets are asked per step, in the request).

        The agent's own tools, plus ``transfer_to_agent`` if it may transfer, plus
        ``set_model_response`` if it has an output schema and tools.
        """
        # They depend on the agent and its place in the tree alone: made once per parent,
        # then copied (every step of the agent asks for them).
        made: tuple[object, list[BaseTool]] | None = self.__dict__.get("_canonical_tools")
        parent = self.parent_agent
        if made is not None and made[0] is parent:
            return list(made[1])
        tools = list(self.tools)
        if self.transfer_targets() and all(t.name != transfer_to_agent.name for t in tools):
            tools.append(transfer_to_agent)
        if uses_response_tool(self):
            tools.append(self._response_tool())
        tools.extend(self._delegation_tools())
        object.__setattr__(self, "_canonical_tools", (parent, tools))
        return list(tools)

    def _delegation_tools(self) -> list[BaseTool]:
        """finish_task for a task agent; a tool per single_turn or task sub-agent."""
        built: list[BaseTool] | None = self.__dict__.get("_delegations")
        if built is None:
            built = [FinishTaskTool(self)] if self.mode == "task" else []
            built += [
                DelegatedAgentTool(sub)
                for sub in self.sub_agents
                if isinstance(sub, LlmAgent) and sub.mode in ("single_turn", "task")
            ]
            object.__setattr__(self, "_delegations", built)
        return built

    def _response_tool(self) -> BaseTool:
        tool = self.__dict__.get("_set_model_response")
        if tool is None:
            tool = SetModelResponseTool(self.output_schema)
            object.__setattr__(self, "_set_model_response", tool)
        return tool

    def tools_by_name(self, ctx: InvocationContext | None = None) -> dict[str, BaseTool]:
        """The canonical tools keyed by name."""
        return {tool.name: tool for tool in self.canonical_tools(ctx)}

    # -- rules of the agent tree --------------------------------------------------------------
    def transfer_targets(self) -> list[BaseAgent]:
        """Sub-agents, plus the parent and peers when this agent may transfer to them."""
        targets: list[BaseAgent] = [s for s in self.sub_agents if not _delegated(s)]
        parent = self.parent_agent
        if isinstance(parent, LlmAgent):
            if not self.disallow_transfer_to_parent:
                targets.append(parent)
            if not self.disallow_transfer_to_peers:
                targets.extend(
                    peer for peer in parent.sub_agents if peer is not self and not _delegated(peer)
                )
        return targets

    def canonical_global_instruction(self) -> Instruction:
        """The root's ``global_instruction`` (it applies to every agent of the tree)."""
        root = self.root_agent
        return root.global_instruction if isinstance(root, LlmAgent) else ""

    def may_take_next_turn(self) -> bool:
        """Every agent from this one up to the root is an LlmAgent that may transfer to its
        parent: so a workflow root (Sequential, Loop, Parallel) always takes turns itself."""
        if self.disallow_transfer_to_parent or self.mode == "single_turn":
            return False
        parent = self.parent_agent
        return parent is None or parent.may_take_next_turn()

    # -- running ----------------------------------------------------------------------------
    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        call = ctx.node_call
        if self.mode == "task" and (call is None or call.agent is not self):
            turn = task_turn(self, ctx)  # the user answers this agent's open task
            if turn is not None:
                return turn
        return self._steps(ctx)

    def _steps(self, ctx: InvocationContext) -> Observable[Event]:
        """The agent's own steps (a structured answer, a resumed or a fresh step loop)."""
        if self.output_schema is not None:
            return structured_flow(self, ctx)
        flow = None
        if ctx.resume is not None:
            flow = resume_llm_flow(self, ctx)
        if flow is None:
            flow = run_llm_flow(self, ctx)
        if self.output_key is None:
            return flow
        return flow.pipe(ops.map(self._save_output))

    def _finished_task(self, event: Event) -> bool:
        """True when ``event`` answers this task agent's successful ``finish_task``: its
        step loop ends there, as google-adk's ends on ``actions.finish_task`` (a delegating
        parent's ``take_while`` cannot stop a loop that runs as plain calls in time)."""
        return self.mode == "task" and task_result(event)

    def _save_output(self, event: Event) -> Event:
        if (
            event.author != self.name
            or event.partial
            or not event.is_final_response()
            or event.content is None
        ):
            return event
        text = event.text()
        if not text:
            return event
        assert self.output_key is not None
        actions = event.actions.replace(
            state_delta={**event.actions.state_delta, self.output_key: text}
        )
        return event.replace(actions=actions)
