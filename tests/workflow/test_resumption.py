"""A Workflow in a resumable app continues where it stopped (a pause for a long-running call,
a dispose) without running a finished node again: node starts and ends are in the event log."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from reactivex import operators as ops

from adk_rx import App, InMemoryRunner, LlmAgent, LongRunningFunctionTool, ResumabilityConfig
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import START, JoinNode, Workflow
from tests.tool_harness import call, calls, user_response
from tests.workflow.support import outputs

pytestmark = pytest.mark.timeout(30)

RESUMABLE = ResumabilityConfig(is_resumable=True)


def _runner(root: Any) -> InMemoryRunner:
    runner = InMemoryRunner(app=App(name="app", root_agent=root, resumability_config=RESUMABLE))
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    return runner


def _run(runner: InMemoryRunner, message: Any = "go", **kwargs: Any) -> list[Event]:
    return (
        runner.run_async(user_id="u", session_id="s", new_message=message, **kwargs)
        .pipe(ops.to_list())
        .run()
    )


def _stored(runner: InMemoryRunner) -> list[Event]:
    return (
        runner.session_service.get_session(app_name="app", user_id="u", session_id="s").run().events
    )


def test_a_paused_agent_node_resumes_with_the_answer_and_finished_nodes_stay_finished() -> None:
    runs: Counter[str] = Counter()

    def prepare(node_input: str) -> str:
        runs["prepare"] += 1
        return "amount 5"

    def ask_approval(amount: int) -> None:
        """Asks a manager to approve an amount."""
        runs["ask_approval"] += 1

    approver_llm = ScriptedLlm([calls(call("ask_approval", {"amount": 5}, "lr-1")), "approved 5"])
    approver = LlmAgent(
        name="approver", model=approver_llm, tools=[LongRunningFunctionTool(ask_approval)]
    )

    def ship(node_input: str) -> str:
        runs["ship"] += 1
        return f"shipped ({node_input})"

    runner = _runner(Workflow(name="wf", edges=[(START, prepare, approver, ship)]))

    first = _run(runner)
    invocation = first[0].invocation_id
    assert outputs(first) == [("wf@1/prepare@1", "amount 5")]
    assert not any(e.actions.end_of_agent and e.author == "wf" for e in first)

    resumed = _run(
        runner,
        user_response("lr-1", "ask_approval", {"approved": True}),
        invocation_id=invocation,
    )

    assert outputs(resumed) == [("wf@1/ship@1", "shipped (approved 5)")]
    assert runs == {"prepare": 1, "ask_approval": 1, "ship": 1}
    assert len(approver_llm.requests) == 2
    assert "approved" in str(approver_llm.requests[1].contents[-1])
    assert {e.invocation_id for e in resumed} == {invocation}
    assert resumed[-1].author == "wf" and resumed[-1].actions.end_of_agent


def test_after_a_dispose_only_the_unfinished_nodes_run_again() -> None:
    runs: Counter[str] = Counter()
    blocked = threading.Event()
    release = threading.Event()
    block = [True]

    def make(name: str) -> Any:
        def work(node_input: Any) -> str:
            runs[name] += 1
            return name

        work.__name__ = name
        return work

    async def slow(node_input: Any) -> str:
        runs["slow"] += 1
        if block[0]:
            blocked.set()
            import asyncio

            await asyncio.sleep(30)
        return "slow"

    def total(node_input: dict[str, str]) -> str:
        runs["total"] += 1
        return "+".join(sorted(node_input))

    workflow = Workflow(
        name="wf",
        edges=[(START, make("a"), (slow, make("c")), JoinNode(name="join"), total)],
    )
    runner = _runner(workflow)
    seen: list[Event] = []
    subscription = runner.run_async(user_id="u", session_id="s", new_message="go").subscribe(
        seen.append
    )
    assert blocked.wait(10)
    subscription.dispose()
    release.set()
    runner.when_idle(user_id="u", session_id="s").run()
    block[0] = False

    resumed = _run(runner, None, invocation_id=seen[0].invocation_id)

    assert runs == {"a": 1, "c": 1, "slow": 2, "total": 1}
    assert [p for p, _ in outputs(resumed)] == ["wf@1/slow@1", "wf@1/join@1", "wf@1/total@1"]
    assert outputs(resumed)[-1] == ("wf@1/total@1", "c+slow")
    assert [e.error_code for e in _stored(runner) if e.error_code] == ["CANCELLED"]


def test_a_finished_workflow_resumes_to_nothing() -> None:
    def once(node_input: Any) -> str:
        return "done"

    runner = _runner(Workflow(name="wf", edges=[(START, once)]))
    first = _run(runner)

    assert _run(runner, None, invocation_id=first[0].invocation_id) == []


def test_progress_records_name_each_node_start_and_end() -> None:
    def a(node_input: Any) -> str:
        return "A"

    runner = _runner(Workflow(name="wf", edges=[(START, a)]))
    _run(runner)

    states = [dict(e.actions.agent_state) for e in _stored(runner) if e.actions.agent_state]
    assert states == [
        {"workflow": "wf@1", "node": "a", "run_id": "1", "status": "running"},
        {
            "workflow": "wf@1",
            "node": "a",
            "run_id": "1",
            "status": "completed",
            "output": "A",
            "route": None,
            "branch": None,
        },
    ]
