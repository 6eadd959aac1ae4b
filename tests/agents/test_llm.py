"""LlmAgent: output_key, model callbacks, model errors, model resolution, the step loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.genai import types

from adk_rx import (
    CallbackContext,
    ConfigurationError,
    LlmAgent,
    LlmRegistry,
    LlmRequest,
    LlmResponse,
    ModelError,
    SequentialAgent,
)
from adk_rx.errors import CallbackError
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import call_response, new_context, raising, run_agent, text


def parts_response(*parts: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)))


# -- output_key (scenario 19) -------------------------------------------------------------


def test_output_key_saves_the_final_text_in_the_event_state_delta() -> None:
    agent = LlmAgent(name="agent", model=ScriptedLlm(["Saved output"]), output_key="out")
    ctx = new_context(agent)
    events = run_agent(agent, ctx)
    assert len(events) == 1
    assert dict(events[0].actions.state_delta) == {"out": "Saved output"}
    assert ctx.session.state["out"] == "Saved output"


def test_output_key_concatenates_text_parts_without_separator() -> None:
    llm = ScriptedLlm([parts_response(types.Part(text="Part 1."), types.Part(text=" Part 2."))])
    agent = LlmAgent(name="agent", model=llm, output_key="out")
    events = run_agent(agent, new_context(agent))
    assert events[0].actions.state_delta["out"] == "Part 1. Part 2."


def test_output_key_ignores_thought_parts() -> None:
    llm = ScriptedLlm(
        [
            parts_response(
                types.Part(text="Thinking...", thought=True), types.Part(text="Final answer")
            )
        ]
    )
    agent = LlmAgent(name="agent", model=llm, output_key="out")
    events = run_agent(agent, new_context(agent))
    assert events[0].actions.state_delta["out"] == "Final answer"


def test_without_output_key_the_state_delta_is_empty() -> None:
    agent = LlmAgent(name="agent", model=ScriptedLlm(["hello"]))
    events = run_agent(agent, new_context(agent))
    assert dict(events[0].actions.state_delta) == {}


def test_output_key_is_not_written_from_a_function_call_event() -> None:
    def echo(value: str) -> dict[str, Any]:
        """Echoes."""
        return {"echo": value}

    llm = ScriptedLlm([call_response("echo", {"value": "x"}), "done"])
    agent = LlmAgent(name="agent", model=llm, tools=[echo], output_key="out")
    events = run_agent(agent, new_context(agent))
    assert [dict(e.actions.state_delta) for e in events] == [{}, {}, {"out": "done"}]


def test_temp_output_of_one_agent_is_visible_to_the_next_agent_of_the_invocation() -> None:
    """Scenario 31."""
    llm = ScriptedLlm(["value1", "agent2 reply"])
    first = LlmAgent(name="agent1", model=llm, output_key="temp:key1")
    second = LlmAgent(
        name="agent2",
        model=llm,
        instruction=lambda ctx: f"Agent1 output: {ctx.state['temp:key1']}",
    )
    root = SequentialAgent(name="root", sub_agents=[first, second])
    run_agent(root, new_context(root))
    assert "Agent1 output: value1" in llm.requests[1].system_instruction_text()


# -- the step loop ------------------------------------------------------------------------


def test_function_call_step_is_followed_by_a_model_step_that_sees_the_response() -> None:
    def my_function() -> str:
        """Returns a fixed value."""
        return "testResponse"

    llm = ScriptedLlm([call_response("my_function"), "second text"])
    agent = LlmAgent(name="agent", model=llm, tools=[my_function])
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == [
        "agent: FunctionCall(my_function, {})",
        'agent: FunctionResponse(my_function, {"result": "testResponse"})',
        "agent: second text",
    ]
    last_contents = llm.requests[1].contents
    assert last_contents[-1].parts[0].function_response.response == {"result": "testResponse"}


def test_tool_that_raises_becomes_an_error_response_and_the_run_goes_on() -> None:
    def broken() -> str:
        """Always fails."""
        raise ValueError("disk on fire")

    llm = ScriptedLlm([call_response("broken"), "recovered"])
    agent = LlmAgent(name="agent", model=llm, tools=[broken])
    events = run_agent(agent, new_context(agent))
    response = events[1].get_function_responses()[0].response
    assert set(response) == {"error"}
    assert "disk on fire" in response["error"]
    assert simplify_events(events)[-1] == "agent: recovered"


def test_max_steps_stops_the_loop_after_that_many_model_calls() -> None:
    def echo_tool() -> str:
        """Echo."""
        return "ok"

    llm = ScriptedLlm([call_response("echo_tool"), call_response("echo_tool"), "unreachable"])
    agent = LlmAgent(name="agent", model=llm, tools=[echo_tool], max_steps=2)
    events = run_agent(agent, new_context(agent))
    assert len(events) == 4
    assert len(llm.requests) == 2


def test_generate_content_config_is_sent_without_changing_the_agent() -> None:
    config = types.GenerateContentConfig(temperature=0.25, max_output_tokens=7)
    llm = ScriptedLlm(["hi"])
    agent = LlmAgent(
        name="agent", model=llm, instruction="be brief", generate_content_config=config
    )
    run_agent(agent, new_context(agent))
    sent = llm.requests[0].config
    assert (sent.temperature, sent.max_output_tokens) == (0.25, 7)
    assert config.system_instruction is None


def test_system_instruction_in_generate_content_config_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="instruction="):
        LlmAgent(
            name="agent",
            model=ScriptedLlm(),
            generate_content_config=types.GenerateContentConfig(system_instruction="x"),
        )


# -- model resolution ---------------------------------------------------------------------


def test_agent_without_a_model_uses_the_nearest_llm_ancestor_model() -> None:
    llm = ScriptedLlm(["child reply"])
    child = LlmAgent(name="child")
    LlmAgent(name="root", model=llm, sub_agents=[SequentialAgent(name="seq", sub_agents=[child])])
    assert child.canonical_model is llm


def test_agent_without_any_model_fails_with_configuration_error() -> None:
    agent = LlmAgent(name="lonely")
    with pytest.raises(ConfigurationError, match="pass model="):
        run_agent(agent, new_context(agent))


def test_model_name_is_resolved_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    # A default registry of its own, so the pattern is not left behind for later tests.
    monkeypatch.setattr(LlmRegistry, "_default", LlmRegistry(builtins=True))
    made: list[str] = []

    def factory(name: str) -> ScriptedLlm:
        made.append(name)
        return ScriptedLlm(["from registry"], model=name)

    LlmRegistry.register(r"adk-rx-test-llm-agent-.*", factory)
    agent = LlmAgent(name="agent", model="adk-rx-test-llm-agent-1")
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: from registry"]
    assert made == ["adk-rx-test-llm-agent-1"]


# -- model callbacks (scenarios 29, 32-35) ------------------------------------------------


def test_before_model_data_reaches_after_model_callback_across_context_copies() -> None:
    """Scenario 29: callback data is shared by every context copy of the invocation."""

    def before(cc: CallbackContext, request: LlmRequest) -> None:
        cc.invocation_context.shared.callback_data["key"] = "value_from_before"

    def after(cc: CallbackContext, response: LlmResponse) -> LlmResponse:
        seen = cc.invocation_context.shared.callback_data["key"]
        return LlmResponse.text(f"Saw: {seen}")

    llm = ScriptedLlm(["first", "second"])
    first = LlmAgent(name="first", model=llm, before_model_callback=before)
    second = LlmAgent(name="second", model=llm, after_model_callback=after)
    root = SequentialAgent(name="root", sub_agents=[first, second])
    events = run_agent(root, new_context(root))
    assert simplify_events(events) == ["first: first", "second: Saw: value_from_before"]


def test_state_written_in_before_model_is_read_in_after_model_and_lands_on_the_event() -> None:
    def before(cc: CallbackContext, request: LlmRequest) -> None:
        cc.state["key"] = "value_from_before"

    def after(cc: CallbackContext, response: LlmResponse) -> LlmResponse:
        return LlmResponse.text(f"Saw: {cc.state['key']}")

    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm(["x"]),
        before_model_callback=before,
        after_model_callback=after,
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: Saw: value_from_before"]
    assert dict(events[0].actions.state_delta) == {"key": "value_from_before"}


def test_before_model_response_replaces_the_model_call_and_skips_after_model() -> None:
    """Scenario 32: a sync empty callback falls through to an async one, which wins."""
    after_calls: list[Any] = []

    def empty(cc: CallbackContext, request: LlmRequest) -> None:
        return None

    async def answer(cc: CallbackContext, request: LlmRequest) -> LlmResponse:
        await asyncio.sleep(0)
        return LlmResponse.text("from callback")

    llm = ScriptedLlm([])
    agent = LlmAgent(
        name="agent",
        model=llm,
        before_model_callback=[empty, answer],
        after_model_callback=lambda cc, r: after_calls.append(r),
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: from callback"]
    assert llm.requests == []
    assert after_calls == []


def test_before_model_edits_to_the_request_reach_the_model() -> None:
    """Scenario 33."""

    def edit(cc: CallbackContext, request: LlmRequest) -> None:
        request.contents = [text("Modified request")]

    llm = ScriptedLlm(["ok"])
    agent = LlmAgent(name="agent", model=llm, before_model_callback=edit)
    run_agent(agent, new_context(agent))
    assert len(llm.requests) == 1
    assert [c.parts[0].text for c in llm.requests[0].contents] == ["Modified request"]


def test_after_model_response_replaces_the_model_response() -> None:
    """Scenario 34."""

    def extend(cc: CallbackContext, response: LlmResponse) -> LlmResponse:
        assert response.content is not None
        parts = [*(response.content.parts or []), types.Part(text="callback part")]
        return LlmResponse(content=types.Content(role="model", parts=parts))

    agent = LlmAgent(name="agent", model=ScriptedLlm(["model part"]), after_model_callback=extend)
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: [model part, callback part]"]


def test_on_model_error_response_becomes_the_only_event() -> None:
    """Scenario 35."""
    seen: list[BaseException] = []

    def recover(cc: CallbackContext, request: LlmRequest, error: Exception) -> LlmResponse:
        seen.append(error)
        return LlmResponse.text("recovered")

    agent = LlmAgent(
        name="agent", model=ScriptedLlm([ValueError("boom")]), on_model_error_callback=recover
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: recovered"]
    assert "boom" in str(seen[0])


def test_on_model_error_returning_none_lets_the_model_error_propagate() -> None:
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([ValueError("boom")]),
        on_model_error_callback=lambda cc, req, err: None,
    )
    with pytest.raises(ModelError, match="boom"):
        run_agent(agent, new_context(agent))


def test_first_on_model_error_callback_with_a_response_wins() -> None:
    second: list[Any] = []
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([ValueError("boom")]),
        on_model_error_callback=[
            lambda cc, req, err: LlmResponse.text("first"),
            lambda cc, req, err: second.append(err),
        ],
    )
    assert simplify_events(run_agent(agent, new_context(agent))) == ["agent: first"]
    assert second == []


def test_model_error_is_a_model_error_naming_the_agent_with_the_cause_kept() -> None:
    agent = LlmAgent(name="agent", model=ScriptedLlm([ValueError("boom")]))
    with pytest.raises(ModelError, match="agent 'agent'") as info:
        run_agent(agent, new_context(agent))
    assert isinstance(info.value.__cause__, ValueError)


def test_raising_model_callback_errors_with_callback_error() -> None:
    llm = ScriptedLlm(["never"])
    agent = LlmAgent(name="agent", model=llm, before_model_callback=raising(KeyError("missing")))
    with pytest.raises(CallbackError, match="missing"):
        run_agent(agent, new_context(agent))
    assert llm.requests == []


def test_transfer_targets_follow_the_tree_and_the_disallow_flags() -> None:
    from adk_rx import SequentialAgent

    leaf = LlmAgent(name="leaf", model=ScriptedLlm([]))
    peer = LlmAgent(name="peer", model=ScriptedLlm([]))
    shy = LlmAgent(
        name="shy",
        model=ScriptedLlm([]),
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
    middle = LlmAgent(name="middle", model=ScriptedLlm([]), sub_agents=[leaf])
    root = LlmAgent(name="root", model=ScriptedLlm([]), sub_agents=[middle, peer, shy])
    assert [a.name for a in middle.transfer_targets()] == ["leaf", "root", "peer", "shy"]
    assert [a.name for a in shy.transfer_targets()] == []
    assert [a.name for a in root.transfer_targets()] == ["middle", "peer", "shy"]
    in_workflow = LlmAgent(name="step", model=ScriptedLlm([]))
    SequentialAgent(name="pipeline", sub_agents=[in_workflow])
    assert in_workflow.transfer_targets() == []  # a workflow parent is not a target


def test_the_root_global_instruction_applies_to_every_llm_agent_of_the_tree() -> None:
    from adk_rx import SequentialAgent

    child = LlmAgent(name="child", model=ScriptedLlm([]))
    root = LlmAgent(
        name="root", model=ScriptedLlm([]), global_instruction="Be kind.", sub_agents=[child]
    )
    assert child.canonical_global_instruction() == "Be kind."
    assert root.canonical_global_instruction() == "Be kind."
    under_workflow = LlmAgent(name="w", model=ScriptedLlm([]), global_instruction="ignored")
    SequentialAgent(name="flow", sub_agents=[under_workflow])
    assert under_workflow.canonical_global_instruction() == ""


def test_only_llm_agents_with_a_transferable_path_to_the_root_take_the_next_turn() -> None:
    from adk_rx import SequentialAgent

    free = LlmAgent(name="free", model=ScriptedLlm([]))
    pinned = LlmAgent(name="pinned", model=ScriptedLlm([]), disallow_transfer_to_parent=True)
    LlmAgent(name="root", model=ScriptedLlm([]), sub_agents=[free, pinned])
    in_workflow = LlmAgent(name="inner", model=ScriptedLlm([]))
    workflow = SequentialAgent(name="flow", sub_agents=[in_workflow])
    assert free.may_take_next_turn()
    assert not pinned.may_take_next_turn()
    assert not in_workflow.may_take_next_turn()
    assert not workflow.may_take_next_turn()


def test_flows_import_no_agent_module_at_runtime() -> None:
    # The tree's rules are methods of the agents, so flows/ needs the agent classes only for
    # type annotations: no import cycle between flows/ and agents/llm.py.
    import ast
    from pathlib import Path

    import adk_rx.flows

    found: list[str] = []
    for path in Path(adk_rx.flows.__path__[0]).glob("*.py"):
        tree = ast.parse(path.read_text())
        checking = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and id(node) not in checking
                and (node.module or "").startswith("adk_rx.agents")
            ):
                found.append(f"{path.name}: {node.module}")
    assert found == []
