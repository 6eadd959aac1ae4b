"""Requests built once: each step's request equals a from-scratch build, and never goes stale.

The flow keeps a request's instructions and tool declarations as plain values until someone
reads ``config`` (a callback, the provider), and reuses the agent's identity and transfer
instructions from step to step. The requests below are compared with the ones the flow made
before it did either: an eager ``GenerateContentConfig`` per step, every instruction
rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

import adk_rx.flows.request as request_module
from adk_rx import (
    App,
    CallbackContext,
    FunctionTool,
    InMemorySessionService,
    LlmAgent,
    LlmRequest,
    LoopAgent,
    RunConfig,
    Runner,
    SequentialAgent,
    ToolContext,
)
from adk_rx.apps import ContextCacheConfig
from adk_rx.models import LlmResponse
from adk_rx.planners import BuiltInPlanner, PlanReActPlanner
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import exit_loop


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def note_total(total: int, tool_context: ToolContext) -> str:
    """Writes the running total to state."""
    tool_context.state["total"] = total
    return "noted"


def call(name: str, **args: Any) -> LlmResponse:
    """A call with an id of its own (the same in both runs of a scenario)."""
    call_id = f"{name}{sorted(args.items())}"
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def run(agent: Any, models: list[ScriptedLlm], **app_options: Any) -> list[LlmRequest]:
    """Runs one turn of ``agent``; every request its models received, in order."""
    runner = Runner(
        app=App(name="app", root_agent=agent, **app_options),
        session_service=InMemorySessionService(),
    )
    list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="go",
            state_delta={"total": 0},
            run_config=RunConfig(auto_create_session=True),
        )
    )
    return [r for m in models for r in m.requests]


def _eager(model: str | None, contents: list[types.Content], base: Any) -> LlmRequest:
    # The request as the flow built it before: its own config copy from the first edit on.
    config = None if base is None else base.model_copy(deep=bool(base.tools))
    return LlmRequest(model=model, contents=contents, config=config)


def _fresh_fixed(agent: LlmAgent) -> Any:
    # Instructions, identity, transfer instruction and the agent's tools, all made again.
    agent.__dict__.pop("_canonical_tools", None)
    return request_module._Fixed(agent, agent.parent_agent, agent.root_agent)  # pyright: ignore[reportPrivateUsage]


def tool_turn() -> tuple[Any, list[ScriptedLlm]]:
    model = ScriptedLlm([call("add", a=2, b=3), call("note_total", total=5), "5"])
    agent = LlmAgent(
        name="calc",
        model=model,
        instruction="Total so far: {total}.",
        global_instruction="Be brief.",
        tools=[add, FunctionTool(note_total)],
        generate_content_config=types.GenerateContentConfig(
            temperature=0.2, tools=[types.Tool(google_search=types.GoogleSearch())]
        ),
    )
    return agent, [model]


def transfer() -> tuple[Any, list[ScriptedLlm]]:
    billing_model = ScriptedLlm([call("add", a=1, b=1), "your bill is 2"])
    router_model = ScriptedLlm([call("transfer_to_agent", agent_name="billing")])
    billing = LlmAgent(name="billing", description="Bills.", model=billing_model, tools=[add])
    router = LlmAgent(name="router", model=router_model, sub_agents=[billing])
    return router, [router_model, billing_model]


def workflow() -> tuple[Any, list[ScriptedLlm]]:
    first_model = ScriptedLlm(["draft"])
    looped_model = ScriptedLlm(["again", call("exit_loop")])
    first = LlmAgent(name="first", model=first_model, output_key="draft")
    looped = LlmAgent(
        name="looped", model=looped_model, instruction="Improve {draft}.", tools=[exit_loop]
    )
    agent = SequentialAgent(
        name="pipeline", sub_agents=[first, LoopAgent(name="loop", sub_agents=[looped])]
    )
    return agent, [first_model, looped_model]


def layout() -> tuple[Any, list[ScriptedLlm]]:
    model = ScriptedLlm([call("add", a=1, b=2), "3"])
    agent = LlmAgent(
        name="desk",
        model=model,
        static_instruction="You are the desk.",
        instruction="Total so far: {total}.",
        tools=[add],
        planner=PlanReActPlanner(),
        output_schema=None,
    )
    return agent, [model]


def thinking() -> tuple[Any, list[ScriptedLlm]]:
    model = ScriptedLlm([call("add", a=1, b=2), "3"])
    planner = BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True))
    agent = LlmAgent(name="thinker", model=model, tools=[add], planner=planner)
    return agent, [model]


SCENARIOS: dict[str, Callable[[], tuple[Any, list[ScriptedLlm]]]] = {
    "tool turn": tool_turn,
    "transfer": transfer,
    "workflow": workflow,
    "static instruction and planner": layout,
    "built-in planner": thinking,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_request_equals_a_from_scratch_build(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, models = SCENARIOS[name]()
    reused = run(agent, models, context_cache_config=ContextCacheConfig())
    agent, models = SCENARIOS[name]()
    monkeypatch.setattr(LlmRequest, "deferred", staticmethod(_eager))
    monkeypatch.setattr(request_module, "_fixed", _fresh_fixed)
    scratch = run(agent, models, context_cache_config=ContextCacheConfig())
    assert len(reused) == len(scratch) >= 2
    assert [view(r) for r in reused] == [view(r) for r in scratch]


def view(request: LlmRequest) -> tuple[Any, ...]:
    """Everything a model is sent (each run has tool objects of its own: their names)."""
    tools = [(name, type(tool).__name__) for name, tool in request.tools_dict.items()]
    return (
        request.model,
        request.contents,
        request.config.model_dump(),
        tools,
        request.live_connect_config,
        request.cache_config,
    )


def test_a_templated_instruction_follows_state_from_step_to_step() -> None:
    agent, models = tool_turn()
    requests = run(agent, models)
    totals = [r.system_instruction_text().count("Total so far: 5.") for r in requests]
    assert totals == [0, 0, 1]  # the state the tool wrote shows in the step after it


def test_a_callbacks_edits_stay_in_its_own_step() -> None:
    """A before_model_callback that edits step 1's request (an instruction, a setting, a tool)
    leaves step 2's as a fresh build makes it, and the agent's config untouched."""
    extra = FunctionTool(note_total)
    seen: list[tuple[str, float | None, list[str]]] = []

    def edit_first(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        seen.append(
            (
                llm_request.system_instruction_text(),
                llm_request.config.temperature,
                sorted(llm_request.tools_dict),
            )
        )
        if len(seen) == 1:
            llm_request.append_instructions(["Only on step one."])
            llm_request.config.temperature = 0.9
            llm_request.append_tools([extra])
            assert llm_request.config.tools is not None
            llm_request.config.tools.append(types.Tool(code_execution=types.ToolCodeExecution()))

    config = types.GenerateContentConfig(temperature=0.2)
    model = ScriptedLlm([call("add", a=1, b=2), "3"])
    agent = LlmAgent(
        name="calc",
        model=model,
        instruction="Add.",
        tools=[add],
        generate_content_config=config,
        before_model_callback=edit_first,
    )
    first, second = run(agent, [model])
    assert "Only on step one." in first.system_instruction_text()
    assert first.config.temperature == 0.9 and "note_total" in first.tools_dict
    assert seen[1] == seen[0]  # step 2 starts from what step 1 started from
    assert "Only on step one." not in second.system_instruction_text()
    assert second.config.temperature == 0.2 and sorted(second.tools_dict) == ["add"]
    assert [d.name for d in second.function_declarations()] == ["add"]
    assert len(second.config.tools or []) == 1
    assert config == types.GenerateContentConfig(temperature=0.2)  # the agent's own


def test_a_tool_added_for_one_step_is_declared_in_that_step_only() -> None:
    extra = FunctionTool(note_total)

    def add_on_second(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        if callback_context.state.get("calls", 0) == 1:
            llm_request.append_tools([extra])
        callback_context.state["calls"] = callback_context.state.get("calls", 0) + 1

    model = ScriptedLlm([call("add", a=1, b=2), call("add", a=3, b=3), "6"])
    agent = LlmAgent(name="calc", model=model, tools=[add], before_model_callback=add_on_second)
    requests = run(agent, [model])
    declared = [[d.name for d in r.function_declarations()] for r in requests]
    assert declared == [["add"], ["add", "note_total"], ["add"]]


def test_a_deferred_request_reads_the_same_before_and_after_its_config_is_made() -> None:
    base = types.GenerateContentConfig(
        system_instruction="Base.",
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="base")])],
    )
    request = LlmRequest.deferred("m", [], base)
    request.append_instructions(["One.", "", "Two."])
    request.append_tools([FunctionTool(add)])
    text = request.system_instruction_text()
    names = [d.name for d in request.function_declarations()]
    assert text == "Base.\n\nOne.\n\nTwo." and names == ["base", "add"]
    config = request.config  # made now
    assert request.system_instruction_text() == text
    assert [d.name for d in request.function_declarations()] == names
    assert config.system_instruction == types.Content(role="user", parts=[types.Part(text=text)])
    assert base.system_instruction == "Base." and len(base.tools or []) == 1  # untouched
    assert base.tools[0].function_declarations is not None  # type: ignore[index]
    assert len(base.tools[0].function_declarations) == 1  # type: ignore[index]
    request.append_instructions(["Three."])  # after it is made, edits go to the config
    assert request.config.system_instruction == types.Content(
        role="user", parts=[types.Part(text=f"{text}\n\nThree.")]
    )
    with pytest.raises(Exception, match="two tools are named 'add'"):
        request.append_tools([FunctionTool(add)])
