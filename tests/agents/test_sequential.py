"""SequentialAgent: order, one shared invocation, state handed along, escalation ignored."""

from __future__ import annotations

import pytest
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import InMemoryRunner, LlmAgent, RunConfig, SequentialAgent
from adk_rx.errors import InvalidAgentError, InvocationTimeoutError
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.agents.scripted_agents import (
    ScriptedAgent,
    invocation_context,
    request_text,
    texts,
)


def _system_instruction(llm: ScriptedLlm, index: int) -> str:
    instruction = llm.requests[index].config.system_instruction
    if isinstance(instruction, str):
        return instruction
    return "\n".join(part.text or "" for part in getattr(instruction, "parts", None) or [])


def test_sub_agents_run_in_order_and_their_events_are_concatenated() -> None:
    first = ScriptedAgent(name="first", runs=[["e1", "e2"]])
    second = ScriptedAgent(name="second", runs=[["e3"]])
    agent = SequentialAgent(name="seq", sub_agents=[first, second])

    events = agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run()

    assert texts(events) == ["e1", "e2", "e3"]
    assert [e.author for e in events] == ["first", "first", "second"]


def test_each_sub_agent_runs_once_in_the_same_invocation_and_session() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"]])
    second = ScriptedAgent(name="second", runs=[["e2"]])
    agent = SequentialAgent(name="seq", sub_agents=[first, second])
    ctx = invocation_context(agent)

    agent.run_async(ctx).pipe(ops.to_list()).run()

    assert len(first.contexts) == 1 and len(second.contexts) == 1
    for sub, seen in ((first, first.contexts[0]), (second, second.contexts[0])):
        assert seen.agent is sub
        assert seen.invocation_id == ctx.invocation_id
        assert seen.session is ctx.session


def test_run_async_is_cold_and_each_subscription_runs_again() -> None:
    first = ScriptedAgent(name="first", runs=[["e1"]])
    agent = SequentialAgent(name="seq", sub_agents=[first])
    events = agent.run_async(invocation_context(agent))

    assert first.contexts == []
    assert texts(events.pipe(ops.to_list()).run()) == ["e1"]
    assert texts(events.pipe(ops.to_list()).run()) == ["e1"]
    assert len(first.contexts) == 2


def test_an_escalating_event_does_not_stop_the_sequence() -> None:
    first = ScriptedAgent(name="first", runs=[["!escalate", "after"]])
    second = ScriptedAgent(name="second", runs=[["e3"]])
    agent = SequentialAgent(name="seq", sub_agents=[first, second])

    events = agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run()

    assert texts(events) == ["escalate", "after", "e3"]
    assert events[0].actions.escalate is True


def test_no_sub_agents_completes_without_events() -> None:
    agent = SequentialAgent(name="seq")
    assert agent.run_async(invocation_context(agent)).pipe(ops.to_list()).run() == []


def test_a_later_agent_sees_what_an_earlier_one_wrote_through_a_runner() -> None:
    writer_llm = ScriptedLlm(["draft: two plus two is four"])
    reviewer_llm = ScriptedLlm(["looks right"])
    writer = LlmAgent(name="writer", model=writer_llm, output_key="temp:draft")
    reviewer = LlmAgent(
        name="reviewer", model=reviewer_llm, instruction="Review this draft: {temp:draft}"
    )
    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[writer, reviewer]))
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    events = list(runner.run(user_id="u", session_id=session.id, new_message="add 2 and 2"))

    assert simplify_events(events) == [
        "writer: draft: two plus two is four",
        "reviewer: looks right",
    ]
    # The temp: key reached the reviewer's instruction within the invocation ...
    assert "Review this draft: draft: two plus two is four" in _system_instruction(reviewer_llm, 0)
    # ... and the writer's answer is in the reviewer's contents.
    assert "draft: two plus two is four" in request_text(reviewer_llm, 0)
    # temp: keys are never persisted.
    stored = runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session.id
    ).run()
    assert "temp:draft" not in stored.state


def test_a_second_turn_runs_the_whole_sequence_again() -> None:
    first_llm = ScriptedLlm(["first 1", "first 2"])
    second_llm = ScriptedLlm(["second 1", "second 2"])
    agent = SequentialAgent(
        name="seq",
        sub_agents=[
            LlmAgent(name="first", model=first_llm),
            LlmAgent(name="second", model=second_llm),
        ],
    )
    runner = InMemoryRunner(agent=agent)
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()

    turn1 = list(runner.run(user_id="u", session_id=session.id, new_message="one"))
    turn2 = list(runner.run(user_id="u", session_id=session.id, new_message="two"))

    assert simplify_events(turn1) == ["first: first 1", "second: second 1"]
    assert simplify_events(turn2) == ["first: first 2", "second: second 2"]


def test_a_cancelled_invocation_starts_no_further_sub_agent() -> None:
    timer = TestScheduler()
    first = ScriptedAgent(name="first", runs=[["e1"]])
    second = ScriptedAgent(name="second", runs=[["e2"]])
    runner = InMemoryRunner(
        agent=SequentialAgent(name="seq", sub_agents=[first, second]), timer_scheduler=timer
    )
    session = runner.session_service.create_session(app_name=runner.app_name, user_id="u").run()
    errors: list[Exception] = []

    def on_next(event: Event) -> None:
        if event.author == "first":
            timer.advance_to(10.0)  # the 1 s deadline passes while "first" is running

    runner.run_async(
        user_id="u", session_id=session.id, new_message="go", run_config=RunConfig(timeout=1.0)
    ).subscribe(on_next, errors.append)

    assert [type(e) for e in errors] == [InvocationTimeoutError]
    assert len(first.contexts) == 1
    assert second.contexts == []


def test_builder_and_keywords_build_the_same_agent() -> None:
    a1, b1 = ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="b", runs=[["y"]])
    a2, b2 = ScriptedAgent(name="a", runs=[["x"]]), ScriptedAgent(name="b", runs=[["y"]])

    built = SequentialAgent.builder().name("s").description("steps").sub_agents(a1, b1).build()
    direct = SequentialAgent(name="s", description="steps", sub_agents=[a2, b2])

    for agent in (built, direct):
        assert isinstance(agent, SequentialAgent)
        assert agent.name == "s" and agent.description == "steps"
        assert [sub.name for sub in agent.sub_agents] == ["a", "b"]
        assert all(sub.parent_agent is agent for sub in agent.sub_agents)
    assert built.sub_agents == (a1, b1)


def test_a_sub_agent_cannot_get_a_second_parent() -> None:
    shared = ScriptedAgent(name="shared", runs=[["x"]])
    SequentialAgent(name="one", sub_agents=[shared])
    with pytest.raises(InvalidAgentError, match="already has parent"):
        SequentialAgent(name="two", sub_agents=[shared])


def test_bad_construction_raises() -> None:
    with pytest.raises(InvalidAgentError):
        SequentialAgent(name="not a name")
    with pytest.raises(InvalidAgentError):
        SequentialAgent(
            name="s",
            sub_agents=[ScriptedAgent(name="a", runs=[[]]), ScriptedAgent(name="a", runs=[[]])],
        )
    with pytest.raises(AttributeError, match="immutable"):
        SequentialAgent(name="s").name = "t"  # type: ignore[misc]
