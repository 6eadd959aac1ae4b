"""static_instruction, planners and the app's context caching in the requests an agent sends."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_rx import App, InMemorySessionService, LlmAgent, RunConfig, Runner
from adk_rx.apps import ContextCacheConfig
from adk_rx.errors import InvalidAgentError
from adk_rx.flows.request_layout import DYNAMIC_INSTRUCTION_LABEL
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse, model_content
from adk_rx.planners import BuiltInPlanner, PlanReActPlanner
from adk_rx.testing import ScriptedLlm, simplify_events

STATIC = "You are the {handbook} desk. Never template this."


def runner_for(agent: LlmAgent, **app_options: Any) -> Runner:
    app = App(name="desk", root_agent=agent, **app_options)
    return Runner(app=app, session_service=InMemorySessionService())


def turn(runner: Runner, text: str, state: dict[str, Any] | None = None) -> list[Any]:
    return list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message=text,
            state_delta=state,
            run_config=RunConfig(auto_create_session=True),
        )
    )


def texts(content: types.Content) -> list[str]:
    return [p.text or "" for p in content.parts or []]


def call(name: str, **args: Any) -> LlmResponse:
    return LlmResponse(
        content=model_content(types.Part(function_call=types.FunctionCall(name=name, args=args)))
    )


def lookup(topic: str) -> dict[str, str]:
    """Looks a topic up in the handbook."""
    return {"topic": topic, "page": "12"}


def test_the_static_instruction_comes_first_untemplated_and_the_instruction_moves_to_the_turn():
    llm = ScriptedLlm(["A1", "A2"])
    agent = LlmAgent(
        name="desk",
        model=llm,
        static_instruction=STATIC,
        instruction="The customer is {customer}.",
        description="Answers handbook questions.",
    )
    runner = runner_for(agent)

    turn(runner, "Q1", {"customer": "Ann"})
    turn(runner, "Q2", {"customer": "Bob"})

    first, second = llm.requests
    system = first.system_instruction_text()
    assert system.startswith(STATIC)  # first, braces and all
    assert "Answers handbook questions." in system and "Ann" not in system
    assert second.system_instruction_text() == system  # byte for byte the same
    assert [texts(c) for c in first.contents] == [
        [f"{DYNAMIC_INSTRUCTION_LABEL}\n\nThe customer is Ann."],
        ["Q1"],
    ]
    assert [c.role for c in second.contents] == ["user", "model", "user", "user"]
    assert [texts(c) for c in second.contents][:2] == [["Q1"], ["A1"]]  # history unchanged
    assert texts(second.contents[2]) == [f"{DYNAMIC_INSTRUCTION_LABEL}\n\nThe customer is Bob."]


def test_in_a_step_after_tool_calls_the_instruction_follows_the_answers() -> None:
    llm = ScriptedLlm([call("lookup", topic="refunds"), "Page 12."])
    agent = LlmAgent(
        name="desk", model=llm, static_instruction=STATIC, instruction="Be brief.", tools=[lookup]
    )

    turn(runner_for(agent), "Refunds?")

    contents = llm.requests[1].contents
    assert [c.role for c in contents] == ["user", "model", "user", "user"]
    assert contents[2].parts[0].function_response is not None  # type: ignore[index]
    assert texts(contents[3]) == [f"{DYNAMIC_INSTRUCTION_LABEL}\n\nBe brief."]


def test_without_a_static_instruction_the_instruction_stays_in_the_system_instruction() -> None:
    llm = ScriptedLlm(["A1"])
    agent = LlmAgent(name="desk", model=llm, instruction="The customer is {customer}.")

    turn(runner_for(agent), "Q1", {"customer": "Ann"})

    [request] = llm.requests
    assert request.system_instruction_text().startswith("The customer is Ann.")
    assert [texts(c) for c in request.contents] == [["Q1"]]


def test_a_static_instruction_may_be_a_content_of_text_but_not_of_media() -> None:
    agent = LlmAgent(
        name="desk",
        model=ScriptedLlm([]),
        static_instruction=types.Content(parts=[types.Part(text="One."), types.Part(text="Two.")]),
    )
    assert agent.static_instruction == "One.\n\nTwo."

    with pytest.raises(InvalidAgentError, match="static_instruction"):
        LlmAgent(
            name="desk",
            static_instruction=types.Part(inline_data=types.Blob(mime_type="image/png", data=b"")),
        )


def test_the_apps_cache_config_is_on_every_request() -> None:
    llm = ScriptedLlm(["A1"])
    config = ContextCacheConfig(cache_intervals=5, ttl_seconds=60)

    uncached = ScriptedLlm(["A1"])

    turn(runner_for(LlmAgent(name="desk", model=llm), context_cache_config=config), "Q1")
    turn(runner_for(LlmAgent(name="desk", model=uncached)), "Q1")

    assert llm.requests[0].cache_config is config
    assert uncached.requests[0].cache_config is None


def test_a_built_in_planner_sets_the_thinking_config() -> None:
    llm = ScriptedLlm(["A1"])
    thinking = types.ThinkingConfig(include_thoughts=True, thinking_budget=512)
    agent = LlmAgent(
        name="desk",
        model=llm,
        planner=BuiltInPlanner(thinking_config=thinking),
        generate_content_config=types.GenerateContentConfig(temperature=0.1),
    )

    turn(runner_for(agent), "Q1")

    config = llm.requests[0].config
    assert config.thinking_config == thinking and config.temperature == 0.1
    assert agent.generate_content_config is not None
    assert agent.generate_content_config.thinking_config is None  # the agent's copy untouched


def test_a_plan_react_planner_instructs_marks_planning_as_thought_and_sends_it_back_plain():
    answer = "/*PLANNING*/1. Look it up./*ACTION*/"
    final = "/*REASONING*/Page 12 has it./*FINAL_ANSWER*/Refunds take 5 days."

    def planned(request: LlmRequest) -> Any:
        return [
            LlmResponse(
                content=model_content(
                    types.Part(text=answer),
                    types.Part(
                        function_call=types.FunctionCall(name="lookup", args={"topic": "r"})
                    ),
                )
            )
        ]

    llm = ScriptedLlm([planned, final])
    agent = LlmAgent(name="desk", model=llm, planner=PlanReActPlanner(), tools=[lookup])
    runner = runner_for(agent)

    events = turn(runner, "Refunds?")

    assert "/*FINAL_ANSWER*/" in llm.requests[0].system_instruction_text()
    first = events[0].content.parts
    assert (first[0].text, first[0].thought) == ("1. Look it up.", True)
    assert simplify_events(events)[-1] == "desk: Refunds take 5 days."
    reasoning = events[-1].content.parts[0]
    assert (reasoning.text, reasoning.thought) == ("Page 12 has it.", True)
    # The planning goes back to the model as plain text (its own earlier words).
    sent = llm.requests[1].contents[1].parts[0]
    assert (sent.text, sent.thought) == ("1. Look it up.", None)
    assert events[0].content.parts[0].thought is True  # the stored event is untouched
