"""Spans of an invocation: tree shape, GenAI attributes, errors, disposal and deadlines."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from opentelemetry.trace import StatusCode
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import (
    AgentTool,
    InvocationTimeoutError,
    LlmAgent,
    ParallelAgent,
    RunConfig,
    SequentialAgent,
)
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.telemetry.support import Traces, turn
from tests.tool_harness import call, calls

pytestmark = pytest.mark.timeout(30)

WAIT = 5.0


@pytest.fixture
def traces() -> Traces:
    return Traces()


def _usage(text: str, prompt: int, reply: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt, candidates_token_count=reply
        ),
        finish_reason=types.FinishReason.STOP,
    )


def test_a_text_turn_is_invocation_agent_and_model_call_with_genai_attributes(
    traces: Traces,
) -> None:
    runner = traces.runner(LlmAgent(name="root", model=ScriptedLlm([_usage("hello", 12, 3)])))

    events = turn(runner)

    assert traces.tree() == [["invocation", [["invoke_agent root", [["call_llm", []]]]]]]
    invocation_id = events[0].invocation_id
    for span in traces.spans():
        assert span.attributes is not None
        assert span.attributes["adk_rx.invocation_id"] == invocation_id
        assert span.attributes["gen_ai.conversation.id"] == "s1"
    agent = traces.one("invoke_agent root").attributes
    assert agent is not None
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.agent.name"] == "root"
    model = traces.one("call_llm").attributes
    assert model is not None
    assert model["gen_ai.request.model"] == "scripted"
    assert model["gen_ai.usage.input_tokens"] == 12
    assert model["gen_ai.usage.output_tokens"] == 3
    assert model["gen_ai.response.finish_reasons"] == ("STOP",)
    assert all(s.status.status_code is StatusCode.UNSET for s in traces.spans())


def test_a_tool_turn_has_one_execute_tool_span_with_name_and_call_id(traces: Traces) -> None:
    def lookup(key: str) -> str:
        """Looks a key up."""
        return key.upper()

    llm = ScriptedLlm([calls(call("lookup", {"key": "a"}, call_id="c1")), "done"])
    runner = traces.runner(LlmAgent(name="root", model=llm, tools=[lookup]))

    turn(runner)

    assert traces.tree() == [
        [
            "invocation",
            [
                [
                    "invoke_agent root",
                    [["call_llm", []], ["execute_tool lookup", []], ["call_llm", []]],
                ]
            ],
        ]
    ]
    tool = traces.one("execute_tool lookup").attributes
    assert tool is not None
    assert tool["gen_ai.operation.name"] == "execute_tool"
    assert tool["gen_ai.tool.name"] == "lookup"
    assert tool["gen_ai.tool.call.id"] == "c1"


def test_a_transferred_agent_runs_inside_the_agent_that_transferred(traces: Traces) -> None:
    billing = LlmAgent(name="billing", model=ScriptedLlm(["refunded"]))
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([calls(call("transfer_to_agent", {"agent_name": "billing"}))]),
        sub_agents=[billing],
    )
    runner = traces.runner(root)

    turn(runner)

    assert traces.tree() == [
        [
            "invocation",
            [
                [
                    "invoke_agent root",
                    [
                        ["call_llm", []],
                        ["execute_tool transfer_to_agent", []],
                        ["invoke_agent billing", [["call_llm", []]]],
                    ],
                ]
            ],
        ]
    ]


def test_sequential_sub_agents_nest_under_the_workflow_agent_in_order(traces: Traces) -> None:
    first = LlmAgent(name="first", model=ScriptedLlm(["one"]))
    second = LlmAgent(name="second", model=ScriptedLlm(["two"]))
    runner = traces.runner(SequentialAgent(name="pipeline", sub_agents=[first, second]))

    turn(runner)

    assert traces.tree() == [
        [
            "invocation",
            [
                [
                    "invoke_agent pipeline",
                    [
                        ["invoke_agent first", [["call_llm", []]]],
                        ["invoke_agent second", [["call_llm", []]]],
                    ],
                ]
            ],
        ]
    ]
    first_span, second_span = traces.one("invoke_agent first"), traces.one("invoke_agent second")
    assert first_span.end_time is not None and second_span.start_time is not None
    assert first_span.end_time <= second_span.start_time


def test_parallel_branches_nest_under_the_workflow_agent_with_their_branch(
    traces: Traces,
) -> None:
    left = LlmAgent(name="left", model=ScriptedLlm(["l"]))
    right = LlmAgent(name="right", model=ScriptedLlm(["r"]))
    runner = traces.runner(ParallelAgent(name="fan", sub_agents=[left, right]))

    turn(runner)

    (invocation,) = traces.tree()
    assert invocation[0] == "invocation"
    ((fan, branches),) = invocation[1]
    assert fan == "invoke_agent fan"
    assert sorted(branches) == [
        ["invoke_agent left", [["call_llm", []]]],
        ["invoke_agent right", [["call_llm", []]]],
    ]
    branch = traces.one("invoke_agent left").attributes
    assert branch is not None and branch["adk_rx.branch"] == "fan.left"


def test_an_agent_tool_runs_its_inner_invocation_under_the_tool_span(traces: Traces) -> None:
    inner = LlmAgent(name="helper", model=ScriptedLlm(["inner answer"]), description="Helps.")
    outer_llm = ScriptedLlm([calls(call("helper", {"request": "help"})), "thanks"])
    runner = traces.runner(LlmAgent(name="outer", model=outer_llm, tools=[AgentTool(inner)]))

    turn(runner)

    assert traces.tree() == [
        [
            "invocation",
            [
                [
                    "invoke_agent outer",
                    [
                        ["call_llm", []],
                        [
                            "execute_tool helper",
                            [["invocation", [["invoke_agent helper", [["call_llm", []]]]]]],
                        ],
                        ["call_llm", []],
                    ],
                ]
            ],
        ]
    ]
    assert len({s.context.trace_id for s in traces.spans()}) == 1


def test_a_tool_that_raises_gives_its_span_status_error_with_the_exception(
    traces: Traces,
) -> None:
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    llm = ScriptedLlm([calls(call("broken")), "sorry"])
    runner = traces.runner(LlmAgent(name="root", model=llm, tools=[broken]))

    turn(runner)

    tool = traces.one("execute_tool broken")
    assert tool.status.status_code is StatusCode.ERROR
    assert "disk on fire" in (tool.status.description or "")
    (exception,) = [e for e in tool.events if e.name == "exception"]
    assert exception.attributes is not None
    assert exception.attributes["exception.type"] == "RuntimeError"
    # The model saw an error response and answered: the run itself went on.
    assert traces.one("invocation").status.status_code is StatusCode.UNSET


def test_a_failing_model_marks_the_call_and_the_invocation_as_errors(traces: Traces) -> None:
    runner = traces.runner(LlmAgent(name="root", model=ScriptedLlm([ValueError("quota")])))

    with pytest.raises(Exception, match="quota"):
        turn(runner)

    assert traces.one("call_llm").status.status_code is StatusCode.ERROR
    assert traces.one("invoke_agent root").status.status_code is StatusCode.ERROR
    invocation = traces.one("invocation")
    assert invocation.status.status_code is StatusCode.ERROR
    assert any(e.name == "exception" for e in invocation.events)


def test_disposal_mid_tool_ends_every_open_span_with_cancelled(traces: Traces) -> None:
    started = threading.Event()
    release = threading.Event()

    def slow() -> str:
        """Waits."""
        started.set()
        release.wait(WAIT)
        return "late"

    llm = ScriptedLlm([calls(call("slow"))])
    runner = traces.runner(LlmAgent(name="root", model=llm, tools=[slow]))
    subscription = runner.run_async(user_id="u1", session_id="s1", new_message="go").subscribe()
    assert started.wait(WAIT)

    subscription.dispose()
    idle = threading.Event()
    runner.when_idle(user_id="u1", session_id="s1").subscribe(on_completed=idle.set)
    assert idle.wait(WAIT)
    release.set()

    names = {s.name for s in traces.spans()}
    assert names == {"invocation", "invoke_agent root", "call_llm", "execute_tool slow"}
    for name in ("invocation", "invoke_agent root", "execute_tool slow"):
        attributes = traces.one(name).attributes
        assert attributes is not None and attributes["adk_rx.error_code"] == "CANCELLED", name
    assert "adk_rx.error_code" not in (traces.one("call_llm").attributes or {})


def test_a_deadline_ends_every_open_span_with_timeout(traces: Traces) -> None:
    clock = TestScheduler()
    disposed = threading.Event()
    hung = rx.never().pipe(ops.finally_action(disposed.set))
    runner = traces.runner(
        LlmAgent(name="root", model=ScriptedLlm([lambda _: hung])), timer_scheduler=clock
    )
    errors: list[Exception] = []
    runner.run_async(
        user_id="u1", session_id="s1", new_message="hi", run_config=RunConfig(timeout=10.0)
    ).subscribe(on_error=errors.append)

    clock.advance_by(10.0)

    assert disposed.is_set()
    assert isinstance(errors[0], InvocationTimeoutError)
    for name in ("invocation", "invoke_agent root", "call_llm"):
        span = traces.one(name)
        assert span.attributes is not None and span.attributes["adk_rx.error_code"] == "TIMEOUT"
        assert span.status.status_code is StatusCode.ERROR


def test_two_concurrent_invocations_never_share_a_trace(traces: Traces) -> None:
    both_in_tool = threading.Barrier(2, timeout=WAIT)

    def meet() -> str:
        """Waits for the other run."""
        both_in_tool.wait()
        return "met"

    def agent() -> LlmAgent:
        return LlmAgent(name="root", model=ScriptedLlm([calls(call("meet")), "ok"]), tools=[meet])

    runners = [traces.runner(agent()), traces.runner(agent())]
    results: list[list[Any]] = [[], []]
    threads = [
        threading.Thread(target=lambda i=i: results[i].extend(turn(runners[i]))) for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)

    assert all(len(r) == 3 for r in results)
    by_invocation: dict[str, set[int]] = {}
    for span in traces.spans():
        assert span.attributes is not None
        by_invocation.setdefault(str(span.attributes["adk_rx.invocation_id"]), set()).add(
            span.context.trace_id
        )
    assert len(by_invocation) == 2
    first, second = by_invocation.values()
    assert len(first) == 1 and len(second) == 1 and first != second


def test_the_invocation_span_continues_the_callers_current_span(traces: Traces) -> None:
    runner = traces.runner(LlmAgent(name="root", model=ScriptedLlm(["hi"])))
    tracer = traces.provider.get_tracer("test")

    with tracer.start_as_current_span("request") as caller:
        turn(runner)

    invocation = traces.one("invocation")
    assert invocation.parent is not None
    assert invocation.parent.span_id == caller.get_span_context().span_id


def test_contents_stay_off_spans_by_default(traces: Traces) -> None:
    def lookup(key: str) -> str:
        """Looks a key up."""
        return "secret-result"

    llm = ScriptedLlm([calls(call("lookup", {"key": "secret-arg"})), "secret-reply"])
    runner = traces.runner(LlmAgent(name="root", model=llm, tools=[lookup]))

    turn(runner, "secret-prompt")

    for span in traces.spans():
        text = repr(dict(span.attributes or {})) + repr([e.attributes for e in span.events])
        assert "secret" not in text, span.name


def test_contents_go_on_spans_when_capture_is_enabled(
    traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")

    def lookup(key: str) -> str:
        """Looks a key up."""
        return "secret-result"

    llm = ScriptedLlm([calls(call("lookup", {"key": "secret-arg"})), "secret-reply"])
    runner = traces.runner(LlmAgent(name="root", model=llm, tools=[lookup]))

    turn(runner, "secret-prompt")

    first_call, second_call = traces.named("call_llm")
    assert "secret-prompt" in str((first_call.attributes or {})["gen_ai.input.messages"])
    assert "secret-reply" in str((second_call.attributes or {})["gen_ai.output.messages"])
    tool = traces.one("execute_tool lookup").attributes or {}
    assert "secret-arg" in str(tool["gen_ai.tool.call.arguments"])
    assert "secret-result" in str(tool["gen_ai.tool.call.result"])
