"""Resuming invocations of a resumable app: nothing finished runs twice.

Every agent gets its own ScriptedLlm, so ``len(llm.requests)`` counts its model calls;
tools count their own executions.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import (
    App,
    ConfigurationError,
    FunctionTool,
    InMemoryRunner,
    InvocationNotFoundError,
    InvocationTimeoutError,
    LlmAgent,
    LongRunningFunctionTool,
    LoopAgent,
    ParallelAgent,
    ResumabilityConfig,
    RunConfig,
    SequentialAgent,
)
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import call, calls, user_response

RESUMABLE = ResumabilityConfig(is_resumable=True)


class Counter:
    """Counts tool executions by name."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}

    def add(self, name: str) -> None:
        self.runs[name] = self.runs.get(name, 0) + 1


def _runner(root: Any, **runner: Any) -> InMemoryRunner:
    app = App(name="app", root_agent=root, resumability_config=RESUMABLE)
    built = InMemoryRunner(app=app, **runner)
    built.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    return built


def _run(runner: InMemoryRunner, message: Any = "go", **kwargs: Any) -> list[Any]:
    return (
        runner.run_async(user_id="u", session_id="s", new_message=message, **kwargs)
        .pipe(ops.to_list())
        .run()
    )


def _texts(events: list[Any]) -> list[str]:
    """The events with content (state and end-of-agent records left out)."""
    return simplify_events(e for e in events if e.content is not None)


def _stored(runner: InMemoryRunner) -> list[Any]:
    return (
        runner.session_service.get_session(app_name="app", user_id="u", session_id="s").run().events
    )


def _approval_agent(name: str, counter: Counter, llm: ScriptedLlm) -> LlmAgent:
    def ask_approval(amount: int) -> None:
        """Asks a manager to approve an amount."""
        counter.add(name)

    return LlmAgent(name=name, model=llm, tools=[LongRunningFunctionTool(ask_approval)])


def test_a_pending_long_running_call_stops_a_sequential_agent_even_when_not_resumable():
    counter = Counter()
    a = LlmAgent(name="a", model=ScriptedLlm(["a done"]))
    b = _approval_agent("b", counter, ScriptedLlm([calls(call("ask_approval", {"amount": 5}))]))
    c_llm = ScriptedLlm(["c done"])
    root = SequentialAgent(name="flow", sub_agents=[a, b, LlmAgent(name="c", model=c_llm)])
    runner = InMemoryRunner(agent=root, app_name="app")
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()

    events = _run(runner)

    assert _texts(events) == ["a: a done", 'b: FunctionCall(ask_approval, {"amount": 5})']
    assert c_llm.requests == []


def test_resume_after_a_long_running_pause_inside_a_sequential_inside_a_loop():
    counter = Counter()
    a_llm = ScriptedLlm(["a1", "a2"])
    b_llm = ScriptedLlm(
        [
            calls(call("ask_approval", {"amount": 1}, "lr-1")),
            "b approved 1",
            calls(call("ask_approval", {"amount": 2}, "lr-2")),
        ]
    )
    c_llm = ScriptedLlm(["c1"])
    steps = SequentialAgent(
        name="steps",
        sub_agents=[
            LlmAgent(name="a", model=a_llm),
            _approval_agent("b", counter, b_llm),
            LlmAgent(name="c", model=c_llm),
        ],
    )
    runner = _runner(LoopAgent(name="loop", sub_agents=[steps], max_iterations=2))

    first = _run(runner)
    invocation = first[0].invocation_id
    resumed = _run(
        runner,
        user_response("lr-1", "ask_approval", {"approved": True}),
        invocation_id=invocation,
    )

    assert _texts(first) == ["a: a1", 'b: FunctionCall(ask_approval, {"amount": 1})']
    assert _texts(resumed) == [
        "b: b approved 1",
        "c: c1",
        "a: a2",
        'b: FunctionCall(ask_approval, {"amount": 2})',
    ]
    assert {e.invocation_id for e in resumed} == {invocation}
    assert (len(a_llm.requests), len(b_llm.requests), len(c_llm.requests)) == (2, 3, 1)
    assert counter.runs == {"b": 2}
    states = [e.actions.agent_state for e in _stored(runner) if e.actions.agent_state]
    assert {"current_sub_agent": "steps", "times_looped": 1} in states
    # the stored tool answer reached b's model call
    assert "approved" in str(b_llm.requests[1].contents[-1])


def test_resuming_a_paused_invocation_without_the_answer_runs_nothing():
    counter = Counter()
    b_llm = ScriptedLlm([calls(call("ask_approval", {"amount": 1}, "lr-1"))])
    c_llm = ScriptedLlm(["c1"])
    root = SequentialAgent(
        name="steps",
        sub_agents=[_approval_agent("b", counter, b_llm), LlmAgent(name="c", model=c_llm)],
    )
    runner = _runner(root)
    invocation = _run(runner)[0].invocation_id

    again = _run(runner, None, invocation_id=invocation)

    assert _texts(again) == []
    assert len(b_llm.requests) == 1 and c_llm.requests == []


def test_a_finished_invocation_resumes_to_nothing():
    llm = ScriptedLlm(["done"])
    runner = _runner(SequentialAgent(name="steps", sub_agents=[LlmAgent(name="a", model=llm)]))
    invocation = _run(runner)[0].invocation_id

    assert _run(runner, None, invocation_id=invocation) == []
    assert len(llm.requests) == 1


def test_parallel_resume_reruns_only_the_unfinished_branch():
    counter = Counter()
    x_llm = ScriptedLlm(["x done"])
    y_llm = ScriptedLlm([calls(call("ask_approval", {"amount": 3}, "lr-y")), "y approved"])
    after = ScriptedLlm(["after"])
    root = SequentialAgent(
        name="steps",
        sub_agents=[
            ParallelAgent(
                name="both",
                sub_agents=[
                    LlmAgent(name="x", model=x_llm),
                    _approval_agent("y", counter, y_llm),
                ],
            ),
            LlmAgent(name="after", model=after),
        ],
    )
    runner = _runner(root)
    first = _run(runner)

    resumed = _run(
        runner,
        user_response("lr-y", "ask_approval", {"ok": True}),
        invocation_id=first[0].invocation_id,
    )

    assert sorted(_texts(first)) == sorted(
        ["x: x done", 'y: FunctionCall(ask_approval, {"amount": 3})']
    )
    assert _texts(resumed) == ["y: y approved", "after: after"]
    assert (len(x_llm.requests), len(y_llm.requests), len(after.requests)) == (1, 2, 1)


class Blocking:
    """A tool that blocks until released on its first call and answers at once afterwards."""

    def __init__(self, counter: Counter, name: str = "lookup") -> None:
        self.counter = counter
        self.name = name
        self.started = threading.Event()
        self.release = threading.Event()

    def tool(self, *, idempotent: bool) -> FunctionTool:
        def lookup(key: str, tool_context: Any) -> dict[str, Any]:
            """Looks a key up."""
            self.counter.add(self.name)
            if self.counter.runs[self.name] == 1:
                self.started.set()
                while not self.release.wait(0.01):
                    if tool_context.cancelled:
                        return {"value": "cut off"}
            return {"value": key.upper()}

        return FunctionTool(lookup, idempotent=idempotent)


def _dispose_mid_tool(idempotent: bool) -> tuple[list[Any], Any, Counter, list[ScriptedLlm]]:
    counter = Counter()
    blocking = Blocking(counter)
    a_llm = ScriptedLlm(["a done"])
    b_llm = ScriptedLlm([calls(call("lookup", {"key": "k"}, "c-1")), "b done"])
    c_llm = ScriptedLlm(["c done"])
    root = SequentialAgent(
        name="steps",
        sub_agents=[
            LlmAgent(name="a", model=a_llm),
            LlmAgent(name="b", model=b_llm, tools=[blocking.tool(idempotent=idempotent)]),
            LlmAgent(name="c", model=c_llm),
        ],
    )
    runner = _runner(root)
    seen: list[Any] = []
    subscription = runner.run_async(user_id="u", session_id="s", new_message="go").subscribe(
        seen.append
    )
    assert blocking.started.wait(10)
    subscription.dispose()
    blocking.release.set()
    runner.when_idle(user_id="u", session_id="s").run()
    resumed = _run(runner, None, invocation_id=seen[0].invocation_id)
    return resumed, runner, counter, [a_llm, b_llm, c_llm]


def test_resume_after_dispose_mid_tool_runs_an_idempotent_tool_again():
    resumed, runner, counter, (a_llm, b_llm, c_llm) = _dispose_mid_tool(idempotent=True)

    assert _texts(resumed) == [
        'b: FunctionResponse(lookup, {"value": "K"})',
        "b: b done",
        "c: c done",
    ]
    assert counter.runs == {"lookup": 2}  # cut off once, run to the end once
    assert (len(a_llm.requests), len(b_llm.requests), len(c_llm.requests)) == (1, 2, 1)
    codes = [e.error_code for e in _stored(runner) if e.error_code]
    assert codes == ["CANCELLED"]


def test_resume_after_dispose_mid_tool_answers_interrupted_for_a_tool_that_may_not_rerun():
    resumed, _, counter, (_, b_llm, c_llm) = _dispose_mid_tool(idempotent=False)

    assert _texts(resumed) == [
        'b: FunctionResponse(lookup, {"error": "interrupted"})',
        "b: b done",
        "c: c done",
    ]
    assert counter.runs == {"lookup": 1}
    assert len(b_llm.requests) == 2 and len(c_llm.requests) == 1


def test_resume_after_a_timeout_in_virtual_time():
    counter = Counter()
    scheduler = TestScheduler()
    started = threading.Event()

    async def fetch(url: str) -> Any:
        """Fetches a page."""
        counter.add("fetch")
        if counter.runs["fetch"] == 1:
            started.set()
            await asyncio.Event().wait()  # hangs until the deadline cancels it
        return {"page": url}

    llm = ScriptedLlm([calls(call("fetch", {"url": "u"}, "f-1")), "summarised"])
    after = ScriptedLlm(["after"])
    root = SequentialAgent(
        name="steps",
        sub_agents=[
            LlmAgent(name="reader", model=llm, tools=[FunctionTool(fetch, idempotent=True)]),
            LlmAgent(name="after", model=after),
        ],
    )
    runner = _runner(root, timer_scheduler=scheduler)
    seen: list[Any] = []
    errors: list[Exception] = []
    runner.run_async(
        user_id="u", session_id="s", new_message="go", run_config=RunConfig(timeout=5)
    ).subscribe(seen.append, errors.append)
    assert started.wait(10)
    scheduler.advance_to(6)

    resumed = _run(runner, None, invocation_id=seen[0].invocation_id)

    assert isinstance(errors[0], InvocationTimeoutError)
    assert _texts(resumed) == [
        'reader: FunctionResponse(fetch, {"page": "u"})',
        "reader: summarised",
        "after: after",
    ]
    assert counter.runs == {"fetch": 2}
    assert len(llm.requests) == 2 and len(after.requests) == 1


def test_an_unknown_invocation_errors_with_invocation_not_found():
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(["x"])))

    with pytest.raises(InvocationNotFoundError, match="e-missing"):
        _run(runner, None, invocation_id="e-missing")


def test_resuming_needs_a_resumable_app_and_a_message_or_an_id():
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(["x"])), app_name="app")

    with pytest.raises(ConfigurationError, match="resumable app"):
        runner.run_async(user_id="u", session_id="s", invocation_id="e-1")
    with pytest.raises(ConfigurationError, match="new_message is required"):
        runner.run_async(user_id="u", session_id="s")


def test_a_resume_with_a_message_still_reruns_the_invocations_idempotent_calls():
    counter = Counter()
    blocking = Blocking(counter)
    llm = ScriptedLlm([calls(call("lookup", {"key": "k"}, "c-1")), "answered"])
    agent = LlmAgent(name="b", model=llm, tools=[blocking.tool(idempotent=True)])
    runner = _runner(agent)
    seen: list[Any] = []
    subscription = runner.run_async(user_id="u", session_id="s", new_message="go").subscribe(
        seen.append
    )
    assert blocking.started.wait(10)
    subscription.dispose()
    blocking.release.set()
    runner.when_idle(user_id="u", session_id="s").run()

    resumed = _run(runner, "and now?", invocation_id=seen[0].invocation_id)

    assert _texts(resumed) == ['b: FunctionResponse(lookup, {"value": "K"})', "b: answered"]
    assert counter.runs == {"lookup": 2}


def test_after_a_repair_an_openai_compatible_server_accepts_the_request(server):
    """The local server answers 400 to a history with an unanswered tool call."""
    from adk_rx.models.openai_compat import OpenAiCompatibleLlm
    from tests.models._fakes import json_reply, strict_history

    def reply(message: dict[str, Any]) -> Any:
        return strict_history(
            json_reply(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": "llama-test",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
            )
        )

    tool_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"key": "k"}'},
    }
    server.push(
        reply({"role": "assistant", "content": None, "tool_calls": [tool_call]}),
        reply({"role": "assistant", "content": "sorry, the lookup was interrupted"}),
    )
    counter = Counter()
    blocking = Blocking(counter)
    model = OpenAiCompatibleLlm("llama-test", base_url=f"{server.url}/v1", retry=None)
    runner = _runner(LlmAgent(name="b", model=model, tools=[blocking.tool(idempotent=False)]))
    seen: list[Any] = []
    subscription = runner.run_async(user_id="u", session_id="s", new_message="go").subscribe(
        seen.append
    )
    assert blocking.started.wait(10)
    subscription.dispose()
    blocking.release.set()
    runner.when_idle(user_id="u", session_id="s").run()

    resumed = _run(runner, None, invocation_id=seen[0].invocation_id)

    assert _texts(resumed) == [
        'b: FunctionResponse(lookup, {"error": "interrupted"})',
        "b: sorry, the lookup was interrupted",
    ]
    messages = [m for m in server.exchanges[1].json()["messages"] if m["role"] != "system"]
    assert [(m["role"], m.get("tool_call_id")) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "call_1"),
    ]
    assert counter.runs == {"lookup": 1}
