"""BaseAgent: the agent tree, immutability, and the before/after-agent callback protocol."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import reactivex as rx

from adk_rx import InvalidAgentError, LlmAgent, SequentialAgent
from adk_rx.errors import CallbackError
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import ReplayAgent, collect, new_context, raising, run_agent, text


class Recorder:
    """A callback that records its calls and returns a fixed value."""

    def __init__(self, result: Any = None, writes: dict[str, Any] | None = None) -> None:
        self.result = result
        self.writes = writes or {}
        self.calls = 0

    def __call__(self, callback_context: Any) -> Any:
        self.calls += 1
        for key, value in self.writes.items():
            callback_context.state[key] = value
        return self.result


# -- names and the tree (scenario 8) ------------------------------------------------------


@pytest.mark.parametrize("name", ["", "1abc", "has space", "a-b", "user", None, 3])
def test_invalid_agent_name_is_rejected_with_invalid_agent_error(name: Any) -> None:
    with pytest.raises(InvalidAgentError, match="agent"):
        ReplayAgent(name=name)


def test_user_is_a_reserved_agent_name() -> None:
    with pytest.raises(InvalidAgentError, match="reserved"):
        ReplayAgent(name="user")


def test_duplicate_sub_agent_names_are_rejected() -> None:
    with pytest.raises(InvalidAgentError, match="two sub-agents named 'a'"):
        ReplayAgent(name="root", sub_agents=[ReplayAgent(name="a"), ReplayAgent(name="a")])


def test_sub_agent_given_a_second_parent_raises_and_keeps_its_first_parent() -> None:
    child = ReplayAgent(name="child")
    first = ReplayAgent(name="first", sub_agents=[child])
    with pytest.raises(InvalidAgentError, match="already has parent 'first'"):
        ReplayAgent(name="second", sub_agents=[child])
    assert child.parent_agent is first


def test_find_agent_searches_self_then_descendants_depth_first() -> None:
    leaf = ReplayAgent(name="leaf")
    mid = ReplayAgent(name="mid", sub_agents=[leaf])
    other = ReplayAgent(name="other")
    root = ReplayAgent(name="root", sub_agents=[mid, other])
    assert root.find_agent("root") is root
    assert root.find_agent("leaf") is leaf
    assert root.find_agent("other") is other
    assert root.find_agent("missing") is None
    assert root.find_sub_agent("root") is None


def test_root_agent_and_parent_agent_follow_the_parent_chain() -> None:
    leaf = ReplayAgent(name="leaf")
    mid = ReplayAgent(name="mid", sub_agents=[leaf])
    root = ReplayAgent(name="root", sub_agents=[mid])
    assert leaf.root_agent is root
    assert leaf.parent_agent is mid
    assert root.parent_agent is None
    assert root.sub_agents == (mid,)


def test_agents_are_immutable_after_construction() -> None:
    agent = LlmAgent(name="a", model=ScriptedLlm())
    with pytest.raises(AttributeError, match="immutable"):
        agent.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        agent.instruction = "x"  # type: ignore[misc]
    assert agent.name == "a"


def test_builder_builds_the_same_agent_as_the_constructor() -> None:
    llm = ScriptedLlm()
    a, b = ReplayAgent(name="a"), ReplayAgent(name="b")
    agent = (
        LlmAgent.builder()
        .name("root")
        .model(llm)
        .instruction("be nice")
        .sub_agents(a)
        .sub_agents(b)
        .output_key("out")
        .build()
    )
    assert isinstance(agent, LlmAgent)
    assert (agent.name, agent.model, agent.instruction, agent.output_key) == (
        "root",
        llm,
        "be nice",
        "out",
    )
    assert agent.sub_agents == (a, b)
    assert a.parent_agent is agent


def test_builder_rejects_an_unknown_field() -> None:
    with pytest.raises(AttributeError, match="no field 'colour'"):
        SequentialAgent.builder().colour("red")


# -- running ------------------------------------------------------------------------------


def test_building_run_async_does_no_work_until_subscribed() -> None:
    agent = ReplayAgent(name="agent", texts=["out"])
    ctx = new_context(agent)
    events = agent.run_async(ctx)
    assert agent.runs == []
    assert simplify_events(collect(events)) == ["agent: out"]
    assert simplify_events(collect(events)) == ["agent: out"]
    assert len(agent.runs) == 2


def test_child_context_names_the_agent_and_extends_a_non_empty_branch() -> None:
    agent = ReplayAgent(name="agent", texts=["out"])
    ctx = new_context(agent)
    run_agent(agent, ctx)
    assert agent.runs[0].agent is agent
    assert agent.runs[0].branch is None
    branched = new_context(agent, branch="par")
    run_agent(agent, branched)
    assert agent.runs[1].branch == "par.agent"
    assert agent.runs[1].invocation_id == branched.invocation_id


def test_before_callback_content_ends_the_agent_and_skips_impl_and_after_callbacks() -> None:
    """Scenario 1."""
    after = Recorder()
    agent = ReplayAgent(
        name="agent",
        texts=["impl"],
        before_agent_callback=lambda cc: text("from before", role="model"),
        after_agent_callback=after,
    )
    ctx = new_context(agent)
    events = run_agent(agent, ctx)
    assert simplify_events(events) == ["agent: from before"]
    assert agent.runs == []
    assert after.calls == 0


def test_first_before_callback_with_content_skips_the_second() -> None:
    """Scenario 2."""
    second = Recorder(result=text("second"))
    agent = ReplayAgent(
        name="agent",
        texts=["impl"],
        before_agent_callback=[Recorder(result=text("first", role="model")), second],
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: first"]
    assert second.calls == 0


def test_after_callback_content_is_emitted_after_the_impl_output() -> None:
    """Scenario 3."""
    agent = ReplayAgent(
        name="agent",
        texts=["impl"],
        after_agent_callback=lambda cc: text("from after", role="model"),
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: impl", "agent: from after"]


def test_before_callback_state_write_becomes_a_state_only_event_before_the_output() -> None:
    """Scenario 4 (before)."""
    agent = ReplayAgent(
        name="agent", texts=["impl"], before_agent_callback=Recorder(writes={"key": "value"})
    )
    ctx = new_context(agent)
    events = run_agent(agent, ctx)
    assert simplify_events(events) == ["agent: [NO_CONTENT]", "agent: impl"]
    assert dict(events[0].actions.state_delta) == {"key": "value"}
    assert events[0].content is None
    assert ctx.session.state["key"] == "value"


def test_after_callback_state_write_becomes_a_state_only_event_after_the_output() -> None:
    """Scenario 4 (after)."""
    agent = ReplayAgent(
        name="agent", texts=["impl"], after_agent_callback=Recorder(writes={"key": "value"})
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: impl", "agent: [NO_CONTENT]"]
    assert dict(events[1].actions.state_delta) == {"key": "value"}


def test_callbacks_writing_state_and_overriding_give_three_events() -> None:
    """Scenario 5."""
    llm = ScriptedLlm(["model says"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        before_agent_callback=Recorder(writes={"before_key": "b"}),
        after_agent_callback=Recorder(
            result=text("after agent content", role="model"), writes={"after_key": "a"}
        ),
    )
    ctx = new_context(agent)
    events = run_agent(agent, ctx)
    assert simplify_events(events) == [
        "agent: [NO_CONTENT]",
        "agent: model says",
        "agent: after agent content",
    ]
    assert [dict(e.actions.state_delta) for e in events] == [
        {"before_key": "b"},
        {},
        {"after_key": "a"},
    ]
    assert ctx.session.state["before_key"] == "b"
    assert ctx.session.state["after_key"] == "a"


def test_state_writes_of_sync_and_async_before_callbacks_merge_into_one_event() -> None:
    """Scenario 6."""

    def sync_cb(cc: Any) -> None:
        cc.state["key1"] = "v1"

    async def async_cb(cc: Any) -> None:
        await asyncio.sleep(0)
        cc.state["key2"] = "v2"

    llm = ScriptedLlm(["model says"])
    agent = LlmAgent(name="agent", model=llm, before_agent_callback=[sync_cb, async_cb])
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: [NO_CONTENT]", "agent: model says"]
    assert dict(events[0].actions.state_delta) == {"key1": "v1", "key2": "v2"}
    assert len(llm.requests) == 1


def test_first_before_callback_returning_content_carries_only_its_own_state() -> None:
    """Scenario 7."""
    second = Recorder(writes={"key2": "v2"})
    llm = ScriptedLlm(["unused"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        before_agent_callback=[
            Recorder(result=text("cb1", role="model"), writes={"key1": "v1"}),
            second,
        ],
    )
    events = run_agent(agent, new_context(agent))
    assert simplify_events(events) == ["agent: cb1"]
    assert dict(events[0].actions.state_delta) == {"key1": "v1"}
    assert second.calls == 0
    assert llm.requests == []


def test_observable_returning_callback_is_awaited() -> None:
    agent = ReplayAgent(
        name="agent",
        texts=["impl"],
        before_agent_callback=lambda cc: rx.just(text("from rx", role="model")),
    )
    assert simplify_events(run_agent(agent, new_context(agent))) == ["agent: from rx"]


def test_before_callback_returning_a_wrong_type_fails_with_callback_error() -> None:
    agent = ReplayAgent(name="agent", texts=["impl"], before_agent_callback=lambda cc: "text")
    with pytest.raises(CallbackError, match=r"must return types\.Content or None, got str"):
        run_agent(agent, new_context(agent))
    assert agent.runs == []


def test_raising_agent_callback_errors_with_callback_error_naming_it() -> None:
    agent = ReplayAgent(
        name="agent", texts=["impl"], after_agent_callback=raising(RuntimeError("boom"))
    )
    with pytest.raises(CallbackError, match="boom") as info:
        run_agent(agent, new_context(agent))
    assert isinstance(info.value.__cause__, RuntimeError)
    assert len(agent.runs) == 1
