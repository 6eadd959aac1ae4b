"""Workflow as an agent: construction and validation, binding, nesting under other agents."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from reactivex import operators as ops

from adk_rx import LlmAgent, SequentialAgent
from adk_rx.errors import ConfigurationError, GraphValidationError
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import (
    DEFAULT_ROUTE,
    START,
    Edge,
    FunctionNode,
    JoinNode,
    RetryConfig,
    Workflow,
    node,
)
from tests.workflow.support import outputs, runner_for, start

pytestmark = pytest.mark.timeout(30)


def _events(agent: Any, text: str = "go") -> list[Event]:
    return start(runner_for(agent), text).pipe(ops.to_list()).run()


def a(node_input: Any) -> str:
    return "a"


def b(node_input: Any) -> str:
    return "b"


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([(a, b)], "START node"),
        ([(START, a), (b, a)], "unreachable from START"),
        ([(START, a, b, a)], "Unconditional cycle detected"),
        ([Edge(from_node=START, to_node=a, route="x")], "Edges from START must not have routes"),
        ([(START, a), (START, a)], "Duplicate edge found"),
        ([(START, a), (a, FunctionNode(func=b, name="a"))], "Duplicate node names"),
        (
            [Edge(from_node=START, to_node=a), Edge(a, b, route=["x", DEFAULT_ROUTE])],
            "DEFAULT_ROUTE",
        ),
    ],
)
def test_a_graph_that_cannot_run_is_refused_at_construction(edges: Any, message: str) -> None:
    with pytest.raises(GraphValidationError, match=message):
        Workflow(name="wf", edges=edges)


def test_a_cycle_through_a_routed_edge_is_allowed() -> None:
    Workflow(name="wf", edges=[(START, a, {"again": a, "done": b})])


def test_bad_nodes_and_names_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="valid Python identifier"):
        FunctionNode(func=a, name="not ok")
    with pytest.raises(ConfigurationError, match="Invalid node"):
        Workflow(name="wf", edges=[(START, 42)])
    with pytest.raises(ConfigurationError, match="not supported"):
        node(a, parallel_worker=True)


def test_agents_in_the_edges_become_sub_agents_of_the_workflow() -> None:
    writer = LlmAgent(name="writer", model=ScriptedLlm([]))
    workflow = Workflow(name="wf", edges=[(START, a, writer)])

    assert workflow.sub_agents == (writer,)
    assert writer.parent_agent is workflow
    assert writer.mode == "single_turn" and writer.include_contents == "none"


class Order(BaseModel):
    item: str
    qty: int


def test_parameters_come_from_state_with_defaults_and_coercion() -> None:
    def put(ctx: Any, node_input: Any) -> None:
        ctx.state["order"] = {"item": "tea", "qty": "2"}

    def describe(order: Order, note: str = "none") -> str:
        return f"{order.qty} x {order.item} ({note})"

    events = _events(Workflow(name="wf", edges=[(START, put, describe)]))

    assert outputs(events) == [("wf@1/describe@1", "2 x tea (none)")]
    assert events[0].actions.state_delta == {"order": {"item": "tea", "qty": "2"}}


def test_a_missing_parameter_fails_the_node_with_a_clear_error() -> None:
    def needs(count: int) -> int:
        return count

    with pytest.raises(ConfigurationError, match='Missing value for parameter "count"'):
        _events(Workflow(name="wf", edges=[(START, needs)]))


def test_the_user_message_reaches_a_str_parameter_as_text() -> None:
    def echo(node_input: str) -> str:
        return node_input

    assert outputs(_events(Workflow(name="wf", edges=[(START, echo)]), "hello")) == [
        ("wf@1/echo@1", "hello")
    ]


def test_a_node_yielding_two_outputs_fails() -> None:
    def twice(node_input: Any) -> Any:
        yield 1
        yield 2

    with pytest.raises(ConfigurationError, match="at most one output"):
        _events(Workflow(name="wf", edges=[(START, twice)]))


def test_a_workflow_runs_as_a_sub_agent_of_a_sequential_agent() -> None:
    inner = Workflow(name="inner", edges=[(START, a, b)])
    after = LlmAgent(name="after", model=ScriptedLlm(["after done"]))
    root = SequentialAgent(name="root", sub_agents=[inner, after])

    events = _events(root)

    assert [(e.author, e.output or e.text()) for e in events] == [
        ("inner", "a"),
        ("inner", "b"),
        ("after", "after done"),
    ]


def test_a_join_waits_for_every_predecessor_of_each_round() -> None:
    def left(node_input: Any) -> str:
        return "L"

    def right(node_input: Any) -> str:
        return "R"

    events = _events(Workflow(name="wf", edges=[(START, (left, right), JoinNode(name="j"))]))

    assert outputs(events)[-1] == ("wf@1/j@1", {"left": "L", "right": "R"})
    assert {e.branch for e in events if e.output in ("L", "R")} == {"left@1", "right@1"}


def test_node_overrides_fields_of_a_node() -> None:
    config = RetryConfig(max_attempts=2)
    built = node(a, name="renamed", timeout=3.0, retry_config=config)

    assert (built.name, built.timeout, built.retry_config) == ("renamed", 3.0, config)
    assert node(retry_config=config)(b).retry_config is config
