"""The same graphs on google-adk 2.13 and on adk_rx.workflow: node outputs, routes taken,
event authors, state and stored history agree (``oracle.py`` runs them)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.workflow.oracle import Kit, Observed, run_both


def _same(adk: Observed, rx: Observed, *, ordered: bool = True) -> None:
    if ordered:
        assert rx.events == adk.events
    else:
        assert sorted(map(repr, rx.events)) == sorted(map(repr, adk.events))
    assert rx.state == adk.state
    assert rx.history_authors[:1] == adk.history_authors[:1] == ["user"]
    assert sorted(rx.history_authors) == sorted(adk.history_authors)
    assert rx.error == adk.error


def linear(k: Kit) -> Any:
    def shout(node_input: str) -> str:
        return node_input.upper()

    def exclaim(node_input: str) -> str:
        return node_input + "!"

    return k.Workflow(name="linear", edges=[(k.START, shout, exclaim)])


def routed(k: Kit) -> Any:
    def classify(ctx: Any, node_input: str) -> str:
        ctx.route = "long" if len(node_input) > 3 else "short"
        return node_input

    def long(node_input: str) -> str:
        return f"long:{node_input}"

    def short(node_input: str) -> str:
        return f"short:{node_input}"

    def fallback(node_input: str) -> str:
        return f"other:{node_input}"

    return k.Workflow(
        name="routed",
        edges=[(k.START, classify, {"long": long, "short": short, k.DEFAULT_ROUTE: fallback})],
    )


def default_route(k: Kit) -> Any:
    def pick(node_input: str) -> Any:
        return "x"  # no route at all: the DEFAULT_ROUTE edge is taken

    def named(node_input: str) -> str:
        return "named"

    def fallback(node_input: str) -> str:
        return f"fallback({node_input})"

    return k.Workflow(
        name="defaults", edges=[(k.START, pick, {"a": named, k.DEFAULT_ROUTE: fallback})]
    )


def fan_out_join(k: Kit) -> Any:
    def split(node_input: str) -> str:
        return node_input

    def left(node_input: str) -> str:
        return f"L({node_input})"

    def right(node_input: str) -> str:
        return f"R({node_input})"

    def merge(node_input: dict[str, str]) -> str:
        return "+".join(f"{k_}={v}" for k_, v in sorted(node_input.items()))

    join = k.JoinNode(name="join")
    return k.Workflow(name="fan", edges=[(k.START, split, (left, right), join, merge)])


def retried(k: Kit) -> Any:
    calls = [0]

    def flaky(node_input: str) -> str:
        calls[0] += 1
        if calls[0] < 3:
            raise ValueError(f"attempt {calls[0]}")
        return f"ok after {calls[0]}"

    config = k.RetryConfig(max_attempts=3, initial_delay=0.001, jitter=0.0)
    return k.Workflow(name="retried", edges=[(k.START, k.node(flaky, retry_config=config))])


def retries_exhausted(k: Kit) -> Any:
    def broken(node_input: str) -> str:
        raise ValueError("always")

    def never(node_input: str) -> str:
        return "never"

    config = k.RetryConfig(max_attempts=2, initial_delay=0.001, jitter=0.0)
    return k.Workflow(
        name="exhausted", edges=[(k.START, k.node(broken, retry_config=config), never)]
    )


def timed_out(k: Kit) -> Any:
    async def slow(node_input: str) -> str:
        await asyncio.sleep(5)
        return "late"

    return k.Workflow(name="timed", edges=[(k.START, k.node(slow, timeout=0.05))])


def agent_nodes(k: Kit) -> Any:
    writer = k.LlmAgent(name="writer", model=k.model(["a draft"]), instruction="Write.")
    editor = k.LlmAgent(
        name="editor", model=k.model(["an edit"]), instruction="Edit.", output_key="final"
    )

    def brief(node_input: str) -> str:
        return f"brief about {node_input}"

    def publish(node_input: str) -> str:
        return f"published: {node_input}"

    return k.Workflow(name="agents", edges=[(k.START, brief, writer, editor, publish)])


def nested(k: Kit) -> Any:
    def first(node_input: str) -> str:
        return "a"

    def second(node_input: str) -> str:
        return node_input + "b"

    inner = k.Workflow(name="inner", edges=[(k.START, first, second)])

    def after(node_input: str) -> str:
        return f"after({node_input})"

    return k.Workflow(name="outer", edges=[(k.START, inner, after)])


def dynamic(k: Kit) -> Any:
    def square(node_input: int) -> int:
        return node_input * node_input

    @k.node(rerun_on_resume=True)
    async def squares(ctx: Any, node_input: str) -> list[int]:
        return [await ctx.run_node(square, node_input=i) for i in range(3)]

    return k.Workflow(name="dynamic", edges=[(k.START, squares)])


def stateful(k: Kit) -> Any:
    def write(ctx: Any, node_input: str) -> None:
        ctx.state["count"] = 41

    def read(count: int) -> int:
        return count + 1

    return k.Workflow(name="stateful", edges=[(k.START, write, read)])


def looping(k: Kit) -> Any:
    def step(ctx: Any, node_input: Any) -> int:
        n = ctx.state.get("n", 0) + 1
        ctx.state["n"] = n
        ctx.route = "again" if n < 3 else "done"
        return n

    def finish(node_input: int) -> str:
        return f"finished at {node_input}"

    return k.Workflow(name="looping", edges=[(k.START, step, {"again": step, "done": finish})])


def limited(k: Kit) -> Any:
    running = [0]
    peak = [0]

    def make(i: int) -> Any:
        async def work(node_input: str) -> int:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            await asyncio.sleep(0.01)
            running[0] -= 1
            return i

        work.__name__ = f"w{i}"
        return work

    def report(node_input: dict[str, int]) -> dict[str, Any]:
        return {"sum": sum(node_input.values()), "peak": peak[0]}

    join = k.JoinNode(name="join")
    workers = tuple(make(i) for i in range(5))
    return k.Workflow(name="limited", max_concurrency=2, edges=[(k.START, workers, join, report)])


def multiple_terminals(k: Kit) -> Any:
    def go(node_input: str) -> str:
        return "go"

    def one(node_input: str) -> str:
        return "one"

    def two(node_input: str) -> str:
        return "two"

    return k.Workflow(name="terminals", edges=[(k.START, go, (one, two))])


ORDERED = [linear, routed, default_route, retried, agent_nodes, nested, dynamic, stateful, looping]


@pytest.mark.parametrize("graph", ORDERED, ids=lambda g: g.__name__)
def test_the_same_graph_runs_the_same_on_both(graph: Any) -> None:
    adk, rx = run_both(graph)
    assert adk.events, "google-adk produced no event"
    _same(adk, rx)


def test_fan_out_and_join_give_the_same_outputs_and_branches() -> None:
    adk, rx = run_both(fan_out_join, "x")
    _same(adk, rx, ordered=False)
    assert rx.outputs["fan@1/merge@1"] == "left=L(x)+right=R(x)"


def test_a_limited_fan_out_never_runs_more_than_max_concurrency_at_once() -> None:
    adk, rx = run_both(limited)
    _same(adk, rx, ordered=False)
    assert rx.outputs["limited@1/report@1"] == {"sum": 10, "peak": 2}


def test_retries_exhausted_fail_the_run_after_an_error_event_per_attempt() -> None:
    adk, rx = run_both(retries_exhausted)
    _same(adk, rx)
    assert [e[4] for e in rx.events] == ["ValueError", "ValueError"]


def test_a_node_past_its_timeout_fails_with_node_timeout_error() -> None:
    adk, rx = run_both(timed_out)
    _same(adk, rx)
    assert rx.error == "NodeTimeoutError"


def test_two_terminal_outputs_are_an_error_on_both() -> None:
    adk, rx = run_both(multiple_terminals)
    assert [e[:3] for e in rx.events[:-1]] == [e[:3] for e in adk.events[:-1]]
    assert adk.events[-1][4] == rx.events[-1][4] == "WorkflowConfigurationError"
    assert (adk.error, rx.error) == ("WorkflowConfigurationError", "ConfigurationError")
