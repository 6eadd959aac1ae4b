"""Instructions: {key} / {key?} templating from state, global instruction, providers (30, 28)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_rx import InMemoryArtifactService, LlmAgent, ReadonlyContext
from adk_rx.errors import InstructionError
from adk_rx.flows.instructions import inject_state
from adk_rx.testing import ScriptedLlm
from tests.spine_support import collect, new_context, run_agent


def system_text(agent: LlmAgent, llm: ScriptedLlm, **ctx_kwargs: Any) -> str:
    ctx = new_context(agent, **ctx_kwargs)
    run_agent(agent, ctx)
    return llm.requests[-1].system_instruction_text()


# -- inject_state -----------------------------------------------------------------------------


def test_state_keys_are_replaced_with_their_values() -> None:
    assert inject_state("Hi {name}, {count} left", {"name": "Ada", "count": 3}) == (
        "Hi Ada, 3 left"
    )


def test_whitespace_inside_braces_is_trimmed() -> None:
    assert inject_state("Hi { name }", {"name": "Ada"}) == "Hi Ada"


def test_missing_optional_key_becomes_empty() -> None:
    assert inject_state("[{nickname?}]", {}) == "[]"


def test_prefixed_keys_are_replaced() -> None:
    state = {"app:theme": "dark", "user:lang": "fr", "temp:draft": "d1"}
    assert inject_state("{app:theme}/{user:lang}/{temp:draft}", state) == "dark/fr/d1"


def test_invalid_key_syntax_is_left_as_written() -> None:
    template = 'Reply as {"a": 1} or {not a key} or {other:key} or {1abc}'
    assert inject_state(template, {}) == template


def test_double_braces_are_literal_braces() -> None:
    assert inject_state("{{name}} is {name}", {"name": "x"}) == "{name} is x"


def test_missing_required_key_raises_instruction_error_naming_the_key_and_the_fix() -> None:
    with pytest.raises(InstructionError, match=r"'customer'.*\{customer\?\}"):
        inject_state("Hello {customer}", {}, "agent")


# -- through the agent ------------------------------------------------------------------------


def test_global_and_agent_instructions_are_joined_in_one_system_instruction() -> None:
    """Scenario 30."""
    llm = ScriptedLlm(["ok"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        instruction="Agent instruction.",
        global_instruction="Global instruction.",
    )
    assert system_text(agent, llm).startswith("Global instruction.\n\nAgent instruction.")


def test_global_instruction_of_the_root_reaches_sub_agents() -> None:
    llm = ScriptedLlm(["ok"])
    child = LlmAgent(name="child", model=llm, instruction="Child.")
    LlmAgent(name="root", model=llm, global_instruction="Be polite.", sub_agents=[child])
    assert system_text(child, llm).startswith("Be polite.\n\nChild.")


def test_missing_required_key_fails_the_run_before_the_model_is_called() -> None:
    llm = ScriptedLlm(["never"])
    agent = LlmAgent(name="agent", model=llm, instruction="Hello {customer}")
    with pytest.raises(InstructionError, match="customer"):
        run_agent(agent, new_context(agent))
    assert llm.requests == []


def test_instruction_sees_the_session_state() -> None:
    llm = ScriptedLlm(["ok"])
    agent = LlmAgent(name="agent", model=llm, instruction="Customer: {customer}")
    ctx = new_context(agent)
    ctx.session.state["customer"] = "Ada"
    run_agent(agent, ctx)
    assert "Customer: Ada" in llm.requests[0].system_instruction_text()


def test_instruction_provider_output_is_used_without_templating() -> None:
    llm = ScriptedLlm(["ok"])
    seen: list[ReadonlyContext] = []

    def provider(ctx: ReadonlyContext) -> str:
        seen.append(ctx)
        return "Use {braces} literally"

    agent = LlmAgent(name="agent", model=llm, instruction=provider)
    assert system_text(agent, llm).startswith("Use {braces} literally")
    assert seen[0].agent_name == "agent"


def test_async_instruction_provider_is_awaited() -> None:
    llm = ScriptedLlm(["ok"])

    async def provider(ctx: ReadonlyContext) -> str:
        return f"Async for {ctx.agent_name}"

    agent = LlmAgent(name="agent", model=llm, instruction=provider)
    assert system_text(agent, llm).startswith("Async for agent")


def test_artifact_placeholder_inserts_the_artifact_text() -> None:
    llm = ScriptedLlm(["ok"])
    agent = LlmAgent(name="agent", model=llm, instruction="Notes: {artifact.notes.txt}")
    artifacts = InMemoryArtifactService()
    ctx = new_context(agent, artifact_service=artifacts)
    collect(
        artifacts.save_artifact(
            app_name=ctx.app_name,
            user_id=ctx.user_id,
            session_id=ctx.session.id,
            filename="notes.txt",
            artifact=types.Part(text="buy milk"),
        )
    )
    run_agent(agent, ctx)
    assert "Notes: buy milk" in llm.requests[0].system_instruction_text()


def test_tools_and_instructions_both_reach_the_request() -> None:
    """Scenario 28."""

    def my_function(x: int) -> int:
        """Doubles x."""
        return 2 * x

    llm = ScriptedLlm(["ok"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        instruction="instruction2",
        global_instruction="instruction1",
        tools=[my_function],
    )
    run_agent(agent, new_context(agent))
    request = llm.requests[0]
    assert "my_function" in request.tools_dict
    assert [d.name for d in request.function_declarations()] == ["my_function"]
    assert request.system_instruction_text().startswith("instruction1\n\ninstruction2")


def test_missing_artifact_is_an_instruction_error_unless_optional() -> None:
    llm = ScriptedLlm(["ok"])
    optional = LlmAgent(name="agent", model=llm, instruction="Notes: [{artifact.notes.txt?}]")
    ctx = new_context(optional, artifact_service=InMemoryArtifactService())
    run_agent(optional, ctx)
    assert "Notes: []" in llm.requests[0].system_instruction_text()
    required = LlmAgent(name="agent", model=llm, instruction="Notes: {artifact.notes.txt}")
    with pytest.raises(InstructionError, match=r"artifact 'notes\.txt'"):
        run_agent(required, new_context(required, artifact_service=InMemoryArtifactService()))
