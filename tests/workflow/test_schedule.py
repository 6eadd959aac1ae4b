"""The schedule of a workflow run: triggers, joins, serialized runs, max_concurrency."""

from __future__ import annotations

from typing import Any

from adk_rx.workflow import START, JoinNode
from adk_rx.workflow.graph import Graph
from adk_rx.workflow.schedule import Schedule


def _node(name: str) -> Any:
    def run(node_input: Any) -> Any:
        return node_input

    run.__name__ = name
    return run


A, B, C, D = (_node(n) for n in "abcd")


def _names(schedule: Schedule) -> list[str]:
    return [start.name for start in schedule.ready()]


def test_max_concurrency_releases_one_start_per_finished_run() -> None:
    schedule = Schedule(Graph([(START, (A, B, C, D))]), None, max_concurrency=2)
    schedule.seed("x")

    assert _names(schedule) == ["a", "b"]
    assert _names(schedule) == []  # the limit holds the others back
    schedule.complete("a", 1, None, "a@1")
    assert _names(schedule) == ["c"]
    schedule.complete("b", 2, None, "b@1")
    schedule.complete("c", 3, None, "c@1")
    assert _names(schedule) == ["d"]


def test_a_fan_out_gives_each_target_a_sub_branch_and_a_join_their_common_prefix() -> None:
    schedule = Schedule(Graph([(START, A, (B, C), JoinNode(name="j"))]), "outer", None)
    schedule.seed("x")
    (a,) = schedule.ready()
    schedule.complete("a", "A", None, a.branch)
    b, c = schedule.ready()
    assert (b.branch, c.branch) == ("outer.b@1", "outer.c@1")
    schedule.complete("b", "B", None, b.branch)
    assert schedule.ready() == []  # the join waits for c
    schedule.complete("c", "C", None, c.branch)
    (join,) = schedule.ready()
    assert (join.name, join.input, join.branch) == ("j", {"b": "B", "c": "C"}, "outer")


def test_a_node_runs_one_trigger_at_a_time_in_arrival_order() -> None:
    schedule = Schedule(Graph([(START, (A, B)), (A, C), (B, C)]), None, None)
    schedule.seed("x")
    a, b = schedule.ready()
    schedule.complete("a", "from a", None, a.branch)
    schedule.complete("b", "from b", None, b.branch)
    (first,) = schedule.ready()  # c's second trigger waits for its first run
    assert (first.name, first.input, first.run_id) == ("c", "from a", "1")
    assert schedule.ready() == []
    schedule.complete("c", None, None, None)
    (second,) = schedule.ready()
    assert (second.input, second.run_id) == ("from b", "2")


def test_replaying_stored_completions_leaves_the_triggers_still_to_run() -> None:
    graph = Graph([(START, A, (B, C), JoinNode(name="j"), D)])
    first = Schedule(graph, None, None)
    first.seed("x")
    first.ready()
    first.complete("a", "A", None, None)
    first.ready()
    first.complete("c", "C", None, "c@1")

    resumed = Schedule(graph, None, None)
    resumed.seed("x")
    resumed.replay("a", "A", None, None)
    resumed.replay("c", "C", None, "c@1")
    (b,) = resumed.ready()  # only b had not finished
    assert (b.name, b.run_id, b.branch) == ("b", "1", "b@1")
    resumed.complete("b", "B", None, b.branch)
    (join,) = resumed.ready()
    assert join.input == {"b": "B", "c": "C"}


def test_a_waiting_run_triggers_nothing() -> None:
    schedule = Schedule(Graph([(START, A, B)]), None, None)
    schedule.seed("x")
    schedule.ready()
    schedule.wait("a")
    assert schedule.ready() == [] and schedule.is_idle
