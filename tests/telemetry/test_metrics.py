"""Metrics: GenAI token usage and operation duration, invocations by outcome."""

from __future__ import annotations

import threading

import pytest
import reactivex as rx
from google.genai import types
from reactivex.testing import TestScheduler

from adk_rx import LlmAgent, RunConfig
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.telemetry.support import Traces, turn
from tests.tool_harness import call, calls

pytestmark = pytest.mark.timeout(30)


def _outcomes(traces: Traces) -> dict[str, int]:
    points = traces.metrics()["adk_rx.invocations"]
    return {str(p.attributes["adk_rx.outcome"]): int(p.value) for p in points}


def test_a_model_call_records_token_usage_by_type_and_its_duration() -> None:
    traces = Traces()
    reply = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=40, candidates_token_count=7
        ),
    )
    runner = traces.runner(LlmAgent(name="root", model=ScriptedLlm([reply])))

    turn(runner)

    metrics = traces.metrics()
    tokens = {
        p.attributes["gen_ai.token.type"]: (p.sum, p.count)
        for p in metrics["gen_ai.client.token.usage"]
    }
    assert tokens == {"input": (40, 1), "output": (7, 1)}
    (duration,) = metrics["gen_ai.client.operation.duration"]
    assert duration.count == 1
    assert duration.attributes["gen_ai.request.model"] == "scripted"
    assert duration.attributes["gen_ai.operation.name"] == "generate_content"
    assert _outcomes(traces) == {"ok": 1}
    (invocation_duration,) = metrics["adk_rx.invocation.duration"]
    assert invocation_duration.count == 1 and invocation_duration.sum > 0


def test_invocations_are_counted_by_outcome_ok_error_cancelled_and_timeout() -> None:
    traces = Traces()
    clock = TestScheduler()
    started = threading.Event()

    def hang(_: object) -> object:
        started.set()
        return rx.never()

    llm = ScriptedLlm(["fine", ValueError("boom"), hang, hang])
    runner = traces.runner(LlmAgent(name="root", model=llm), timer_scheduler=clock)

    turn(runner)
    with pytest.raises(Exception, match="boom"):
        turn(runner)
    subscription = runner.run_async(user_id="u1", session_id="s1", new_message="x").subscribe()
    assert started.wait(5)
    subscription.dispose()
    runner.run_async(
        user_id="u1", session_id="s1", new_message="y", run_config=RunConfig(timeout=1.0)
    ).subscribe(on_error=lambda _: None)
    clock.advance_by(1.0)

    assert _outcomes(traces) == {"ok": 1, "error": 1, "cancelled": 1, "timeout": 1}
    failed = [
        p
        for p in traces.metrics()["gen_ai.client.operation.duration"]
        if "error.type" in p.attributes
    ]
    assert [p.attributes["error.type"] for p in failed] == ["ValueError"]


def test_a_tool_turn_counts_each_model_call() -> None:
    traces = Traces()

    def ping() -> str:
        """Pings."""
        return "pong"

    runner = traces.runner(
        LlmAgent(name="root", model=ScriptedLlm([calls(call("ping")), "done"]), tools=[ping])
    )

    turn(runner)

    (duration,) = traces.metrics()["gen_ai.client.operation.duration"]
    assert duration.count == 2


def test_with_a_pricing_each_model_call_records_its_cost_on_the_span_and_the_counter() -> None:
    from adk_rx.usage import ModelPrice, Pricing

    traces = Traces()
    reply = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1_000, candidates_token_count=500
        ),
    )
    pricing = Pricing({"scripted": ModelPrice(input_per_million=2.0, output_per_million=8.0)})
    runner = traces.runner(LlmAgent(name="root", model=ScriptedLlm([reply, reply])))

    turn(runner, run_config=RunConfig(pricing=pricing))
    turn(runner)  # no pricing: no cost recorded

    # 1000 * 2e-6 + 500 * 8e-6 = 0.006
    (cost,) = traces.metrics()["adk_rx.cost"]
    assert cost.value == pytest.approx(0.006)
    assert cost.attributes["gen_ai.request.model"] == "scripted"
    costs = [(s.attributes or {}).get("adk_rx.cost") for s in traces.named("call_llm")]
    assert costs[0] == pytest.approx(0.006) and costs[1] is None
