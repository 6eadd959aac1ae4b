"""with_model: a copy of an agent tree on another model; the original is untouched."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import BaseAgent, InMemoryRunner, LlmAgent, SequentialAgent
from adk_rx.errors import ConfigurationError
from adk_rx.testing import ScriptedLlm, simplify_events, with_model


def shout(text: str) -> str:
    """Shouts."""
    return text.upper()


def tree() -> SequentialAgent:
    first = LlmAgent(name="first", model="gemini-2.5-flash", tools=[shout], output_key="a")
    inherits = LlmAgent(name="inherits")
    second = LlmAgent(name="second", model="gemini-2.5-flash", sub_agents=[inherits])
    return SequentialAgent(name="flow", sub_agents=[first, second])


def test_one_model_for_every_agent_leaves_the_original_tree_as_it_was() -> None:
    original = tree()
    llm = ScriptedLlm(["one", "two"])
    copy = with_model(original, llm)

    first, second = copy.sub_agents
    assert first.canonical_model is llm and second.canonical_model is llm
    assert second.sub_agents[0].model is None  # still inherits, now the scripted model
    assert second.sub_agents[0].canonical_model is llm
    assert [t.name for t in first.tools] == ["shout"] and first.output_key == "a"
    assert original.sub_agents[0].model == "gemini-2.5-flash"
    assert original.sub_agents[0].parent_agent is original

    runner = InMemoryRunner(agent=copy)
    session = runner.session_service.create_session(app_name="flow", user_id="u").run()
    events = list(runner.run(user_id="u", session_id=session.id, new_message="go"))
    assert simplify_events(events) == ["first: one", "second: two"]


def test_a_mapping_replaces_only_the_named_agents() -> None:
    llm = ScriptedLlm(["x"])
    copy = with_model(tree(), {"second": llm})
    first, second = copy.sub_agents
    assert first.model == "gemini-2.5-flash" and second.canonical_model is llm


def test_an_unknown_agent_name_is_an_error_naming_the_agents() -> None:
    with pytest.raises(ConfigurationError, match=r"no agent named 'sceond'.*first, flow"):
        with_model(tree(), {"sceond": ScriptedLlm([])})


def test_a_custom_agent_that_hides_a_constructor_argument_cannot_be_copied() -> None:
    class Custom(BaseAgent):
        def __init__(self, *, name: str, secret: int) -> None:
            super().__init__(name=name)

        def _run_async_impl(self, ctx: Any) -> Any:
            raise NotImplementedError

    with pytest.raises(ConfigurationError, match=r"cannot rebuild agent 'c'.*'secret'"):
        with_model(Custom(name="c", secret=1), ScriptedLlm([]))
