"""LoopAgent: rounds, max_iterations, escalation (inclusive), laziness, scoped early ends."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse, LoopAgent, RunConfig
from adk_rx.context import CallbackContext
from adk_rx.errors import InvalidAgentError, InvocationTimeoutError
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.tools import exit_loop
from tests.agents.scripted_agents import ScriptedAgent, invocation_context, texts


def _run(agent: LoopAgent) -> list[Any]:
    return agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run()


def test_sub_agents_repeat_in_order_for_max_iterations() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"], ["e3"]])
    second = ScriptedAgent(name="second", runs=[["e2"], ["e4"]])
    agent = LoopAgent(name="loop", sub_agents=[first, second], max_iterations=2)

    assert texts(_run(agent)) == ["e1", "e2", "e3", "e4"]
    assert len(first.contexts) == 2 and len(second.contexts) == 2


def test_an_escalating_event_is_emitted_and_ends_the_loop_at_once() -> None:
    first = ScriptedAgent(name="first", runs=[["e1", "!esc", "e3"]])
    second = ScriptedAgent(name="second", runs=[["e4"]])
    agent = LoopAgent(name="loop", sub_agents=[first, second])

    events = _run(agent)

    assert texts(events) == ["e1", "esc"]
    assert events[-1].actions.escalate is True
    assert second.contexts == []


def test_escalation_in_a_later_round_stops_before_the_rest_of_the_round() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"], ["e3"], ["!esc5"]])
    second = ScriptedAgent(name="second", runs=[["e2"], ["e4"], ["!esc6"]])
    agent = LoopAgent(name="loop", sub_agents=[first, second], max_iterations=3)

    assert texts(_run(agent)) == ["e1", "e2", "e3", "e4", "esc5"]
    assert len(second.contexts) == 2


def test_without_max_iterations_the_loop_is_endless_and_lazy() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"]])
    second = ScriptedAgent(name="second", runs=[["e2"]])
    agent = LoopAgent(name="loop", sub_agents=[first, second])

    events = agent.run_async(invocation_context(agent)).pipe(ops.take(10), ops.to_list()).run()

    assert texts(events) == ["e1", "e2"] * 5
    # Taking the 10th event stops the loop: no sub-agent starts another round.
    assert len(first.contexts) == 5 and len(second.contexts) == 5


def test_run_async_is_cold() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"]])
    agent = LoopAgent(name="loop", sub_agents=[first], max_iterations=2)
    events = agent.run_async(invocation_context(agent))

    assert first.contexts == []
    assert texts(events.pipe(ops.to_list()).run()) == ["e1", "e1"]
    assert texts(events.pipe(ops.to_list()).run()) == ["e1", "e1"]
    assert len(first.contexts) == 4


def test_a_sub_agents_early_end_ends_only_that_sub_agent() -> None:
    calls: list[int] = []

    def exit_from_second_call(callback_context: CallbackContext) -> types.Content | None:
        calls.append(1)
        if len(calls) < 2:
            return None
        text = f"Exit Callback Triggered After {len(calls)} Runs"
        return types.Content(role="model", parts=[types.Part(text=text)])

    normal = ScriptedAgent(
        name="normal",
        runs=[["Normal Agent Run 1"], ["Normal Agent Run 2"], ["Normal Agent Run 3"]],
    )
    early_exit = ScriptedAgent(
        name="early_exit",
        runs=[["Early Exit Agent Run 1"]],
        before_agent_callback=exit_from_second_call,
    )
    agent = LoopAgent(name="loop", sub_agents=[normal, early_exit], max_iterations=3)

    assert texts(_run(agent)) == [
        "Normal Agent Run 1",
        "Early Exit Agent Run 1",
        "Normal Agent Run 2",
        "Exit Callback Triggered After 2 Runs",
        "Normal Agent Run 3",
        "Exit Callback Triggered After 3 Runs",
    ]
    assert len(normal.contexts) == 3
    assert len(early_exit.contexts) == 1


def test_an_llm_agent_calling_exit_loop_ends_the_loop_through_a_runner() -> None:
    exit_call = LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="exit_loop", args={}))],
        )
    )
    llm = ScriptedLlm(["draft 1", "draft 2", exit_call, "never asked"])
    critic = LlmAgent(name="critic", model=llm, tools=[exit_loop])
    runner = InMemoryRunner(agent=LoopAgent(name="loop", sub_agents=[critic], max_iterations=10))
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    events = list(runner.run(user_id="u", session_id=session.id, new_message="refine it"))

    assert simplify_events(events) == [
        "critic: draft 1",
        "critic: draft 2",
        "critic: FunctionCall(exit_loop, {})",
        "critic: FunctionResponse(exit_loop, {})",
    ]
    assert events[-1].actions.escalate is True
    assert len(llm.requests) == 3


def test_a_cancelled_invocation_starts_no_further_sub_agent() -> None:
    # Everything runs synchronously on the subscribing thread; the deadline (virtual time,
    # advanced from inside the subscriber) cancels the invocation in the middle of the loop.
    timer = TestScheduler()
    ticker = ScriptedAgent(name="ticker", runs=[["tick"]])
    loop = LoopAgent(name="loop", sub_agents=[ticker], max_iterations=1000)
    runner = InMemoryRunner(agent=loop, timer_scheduler=timer)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()
    ticks: list[Any] = []
    errors: list[Exception] = []

    def on_next(event: Any) -> None:
        if event.author == "ticker" and event.text() == "tick":
            ticks.append(event)
            if len(ticks) == 5:
                timer.advance_to(10.0)  # the 1 s deadline passes

    runner.run_async(
        user_id="u", session_id=session.id, new_message="go", run_config=RunConfig(timeout=1.0)
    ).subscribe(on_next, errors.append)

    assert len(ticks) == 5
    assert len(ticker.contexts) == 5
    assert [type(e) for e in errors] == [InvocationTimeoutError]


def test_max_iterations_zero_runs_nothing() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"]])
    agent = LoopAgent(name="loop", sub_agents=[first], max_iterations=0)

    assert _run(agent) == []
    assert first.contexts == []


def test_no_sub_agents_completes_even_without_max_iterations() -> None:
    agent = LoopAgent(name="loop")
    assert _run(agent) == []


def test_negative_max_iterations_is_rejected() -> None:
    with pytest.raises(InvalidAgentError, match="max_iterations"):
        LoopAgent(name="loop", max_iterations=-1)
    with pytest.raises(InvalidAgentError, match="max_iterations"):
        LoopAgent.builder().name("loop").max_iterations(-3).build()


def test_builder_and_keywords_build_the_same_agent() -> None:
    a1, a2 = ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="a", runs=[["x"]])

    built = LoopAgent.builder().name("l").sub_agents(a1).max_iterations(3).build()
    direct = LoopAgent(name="l", sub_agents=[a2], max_iterations=3)

    for agent in (built, direct):
        assert isinstance(agent, LoopAgent)
        assert (agent.name, agent.max_iterations) == ("l", 3)
        assert [sub.name for sub in agent.sub_agents] == ["a"]
        assert texts(_run(agent)) == ["x", "x", "x"]
    assert LoopAgent(name="forever").max_iterations is None
    with pytest.raises(AttributeError, match="immutable"):
        built.max_iterations = 4  # type: ignore[misc]


def test_a_sub_agent_cannot_get_a_second_parent() -> None:
    shared = ScriptedAgent(name="shared", runs=[["x"]])
    LoopAgent(name="one", sub_agents=[shared])
    with pytest.raises(InvalidAgentError, match="already has parent"):
        LoopAgent(name="two", sub_agents=[shared])


# -- scoped exits: an inner loop's escalation ends that loop only ------------------------------


def test_an_inner_loops_exit_ends_the_inner_loop_only() -> None:
    worker = ScriptedAgent(name="worker", runs=[["w1", "!done"]])
    inner = LoopAgent(name="inner", sub_agents=[worker])
    after = ScriptedAgent(name="after", runs=[["a"]])
    outer = LoopAgent(name="outer", sub_agents=[inner, after], max_iterations=3)

    events = _run(outer)

    assert texts(events) == ["w1", "done", "a"] * 3
    assert len(worker.contexts) == 3 and len(after.contexts) == 3


def test_an_escalation_outside_the_inner_loop_still_ends_the_outer_one() -> None:
    inner = LoopAgent(name="inner", sub_agents=[ScriptedAgent(name="w", runs=[["!x"]])])
    stop = ScriptedAgent(name="stop", runs=[["s1"], ["!halt"]])
    outer = LoopAgent(name="outer", sub_agents=[inner, stop], max_iterations=10)

    assert texts(_run(outer)) == ["x", "s1", "x", "halt"]


def test_exit_loop_in_a_nested_loop_lets_the_outer_loop_go_on_through_a_runner() -> None:
    exit_call = LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="exit_loop", args={}))],
        )
    )
    critic_llm = ScriptedLlm(["draft", exit_call] * 2)
    critic = LlmAgent(name="critic", model=critic_llm, tools=[exit_loop])
    refine = LoopAgent(name="refine", sub_agents=[critic], max_iterations=5)
    publish = LlmAgent(name="publish", model=ScriptedLlm(["published 1", "published 2"]))
    chapters = LoopAgent(name="chapters", sub_agents=[refine, publish], max_iterations=2)
    runner = InMemoryRunner(agent=chapters)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    events = list(runner.run(user_id="u", session_id=session.id, new_message="write"))

    assert simplify_events(events) == [
        "critic: draft",
        "critic: FunctionCall(exit_loop, {})",
        "critic: FunctionResponse(exit_loop, {})",
        "publish: published 1",
    ] * 1 + [
        "critic: draft",
        "critic: FunctionCall(exit_loop, {})",
        "critic: FunctionResponse(exit_loop, {})",
        "publish: published 2",
    ]
