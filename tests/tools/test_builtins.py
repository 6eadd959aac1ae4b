"""Built-in tools (exit_loop, transfer_to_agent) and tool configuration errors."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import ConfigurationError, FunctionTool, InvalidAgentError, LlmAgent, LoopAgent
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.tools import exit_loop, load_artifacts, load_memory, transfer_to_agent
from tests.tool_harness import Harness, call, calls


def test_exit_loop_ends_the_enclosing_loop_without_another_model_call() -> None:
    llm = ScriptedLlm(["iteration 1", calls(call("exit_loop", {})), "unreachable"])
    worker = LlmAgent(name="worker", model=llm, tools=[exit_loop])
    harness = Harness(LoopAgent(name="loop", sub_agents=[worker], max_iterations=5))

    events = harness.turn()

    assert simplify_events(events) == [
        "worker: iteration 1",
        "worker: FunctionCall(exit_loop, {})",
        "worker: FunctionResponse(exit_loop, {})",
    ]
    assert events[-1].actions.escalate is True
    assert events[-1].actions.skip_summarization is True
    assert len(llm.requests) == 2


def test_transfer_to_agent_is_added_only_when_there_is_somewhere_to_go() -> None:
    llm = ScriptedLlm()
    child = LlmAgent(name="child")
    parent = LlmAgent(name="parent", model=llm, sub_agents=[child])

    assert "transfer_to_agent" in parent.tools_by_name()
    assert "transfer_to_agent" in child.tools_by_name()
    assert "transfer_to_agent" not in LlmAgent(name="lonely", model=llm).tools_by_name()


def test_transfer_instruction_lists_the_targets_and_the_tool_is_declared() -> None:
    llm = ScriptedLlm(["hello"])
    root = LlmAgent(
        name="root",
        model=llm,
        sub_agents=[LlmAgent(name="billing", description="Handles invoices.")],
    )

    Harness(root).turn()

    request = llm.requests[0]
    instruction = request.system_instruction_text()
    assert "Agent name: billing\nAgent description: Handles invoices." in instruction
    assert "transfer_to_agent" in request.tools_dict
    assert [d.name for d in request.function_declarations()] == ["transfer_to_agent"]


def test_transfer_without_an_agent_name_is_an_error_response_and_no_transfer() -> None:
    llm = ScriptedLlm([calls(call("transfer_to_agent", {})), "staying"])
    root = LlmAgent(name="root", model=llm, sub_agents=[LlmAgent(name="child")])

    events = Harness(root).turn()

    response = events[1].get_function_responses()[0].response or {}
    assert "agent_name" in response["error"]
    assert events[1].actions.transfer_to_agent is None
    assert simplify_events(events)[-1] == "root: staying"


def test_builtin_instances_have_their_wire_names() -> None:
    assert [t.name for t in (exit_loop, transfer_to_agent, load_memory, load_artifacts)] == [
        "exit_loop",
        "transfer_to_agent",
        "load_memory",
        "load_artifacts",
    ]


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@pytest.mark.parametrize("name", ["my tool", "1abc", "a/b", "x" * 65, "tool()"])
def test_a_tool_name_that_is_not_an_identifier_is_rejected(name: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid tool name"):
        FunctionTool(add, name=name)


def test_two_tools_with_one_name_on_an_agent_are_rejected() -> None:
    def other_add(x: int) -> int:
        return x

    with pytest.raises(InvalidAgentError, match="two tools named 'add'"):
        LlmAgent(name="calc", model=ScriptedLlm(), tools=[add, FunctionTool(other_add, name="add")])
    assert issubclass(InvalidAgentError, ConfigurationError)


def test_something_that_is_not_a_tool_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="not a tool"):
        LlmAgent(name="calc", model=ScriptedLlm(), tools=[42])


def test_a_tool_parameter_type_json_schema_cannot_describe_is_rejected() -> None:
    class Opaque:
        pass

    def use(thing: Opaque) -> None:
        """Uses a thing."""

    with pytest.raises(ConfigurationError):
        FunctionTool(use)


def test_agents_with_the_same_builtin_tool_instance_are_fine() -> None:
    llm = ScriptedLlm()
    first: Any = LlmAgent(name="first", model=llm, tools=[exit_loop, load_memory])
    second: Any = LlmAgent(name="second", model=llm, tools=[exit_loop, load_memory])

    assert first.tools[0] is second.tools[0] is exit_loop
