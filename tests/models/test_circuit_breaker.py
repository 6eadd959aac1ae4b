"""CircuitBreakerLlm: opens after failures in a row, fails fast, probes after a cooldown."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx.errors import CircuitOpenError, ModelError
from adk_rx.models import LlmRequest
from adk_rx.models.circuit_breaker import CircuitBreakerLlm
from adk_rx.models.resilience import ResilientLlm, RetryPolicy
from adk_rx.testing import ScriptedLlm


def _request() -> LlmRequest:
    return LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])


def _down() -> ModelError:
    return ModelError("HTTP 503: overloaded", status=503, retryable=True)


def _call(llm: Any) -> str:
    responses = llm.generate_content(_request()).pipe(ops.to_list()).run()
    return responses[-1].content.parts[0].text


def test_failures_in_a_row_open_the_circuit_and_later_calls_fail_fast() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_down(), _down(), "never asked"])
    llm = CircuitBreakerLlm(inner, failure_threshold=2, cooldown=30.0, scheduler=clock)

    for _ in range(2):
        with pytest.raises(ModelError, match="overloaded"):
            _call(llm)
    with pytest.raises(CircuitOpenError, match="circuit open for scripted: 2 failure"):
        _call(llm)

    assert len(inner.requests) == 2  # the open circuit never reached the model
    assert llm.breaker.state == "open"


def test_after_the_cooldown_one_probe_goes_through_and_closes_the_circuit() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_down(), "back", "again"])
    llm = CircuitBreakerLlm(inner, failure_threshold=1, cooldown=30.0, scheduler=clock)
    with pytest.raises(ModelError):
        _call(llm)

    clock.advance_to(29.0)
    with pytest.raises(CircuitOpenError):
        _call(llm)
    clock.advance_to(30.0)
    assert llm.breaker.state == "half-open"

    assert _call(llm) == "back"
    assert llm.breaker.state == "closed"
    assert _call(llm) == "again"


def test_a_failed_probe_opens_the_circuit_for_another_cooldown() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_down(), _down(), "ok"])
    llm = CircuitBreakerLlm(inner, failure_threshold=1, cooldown=10.0, scheduler=clock)
    with pytest.raises(ModelError):
        _call(llm)
    clock.advance_to(10.0)

    with pytest.raises(ModelError, match="overloaded"):
        _call(llm)  # the probe
    clock.advance_to(19.0)
    with pytest.raises(CircuitOpenError):
        _call(llm)
    clock.advance_to(20.0)
    assert _call(llm) == "ok"


def test_errors_that_say_nothing_of_the_models_health_do_not_count() -> None:
    inner = ScriptedLlm([ModelError("HTTP 400: bad request", status=400), "fine"])
    llm = CircuitBreakerLlm(inner, failure_threshold=1, scheduler=TestScheduler())

    with pytest.raises(ModelError, match="bad request"):
        _call(llm)

    assert _call(llm) == "fine"


def test_an_open_circuit_falls_back_at_once_without_retrying_the_primary() -> None:
    clock = TestScheduler()
    primary = CircuitBreakerLlm(
        ScriptedLlm([_down()], model="primary"), failure_threshold=1, scheduler=clock
    )
    backup = ScriptedLlm(["from backup", "from backup again"], model="backup")
    slow_retries = RetryPolicy(max_attempts=5, initial_delay=60.0, jitter=0.0)
    llm = ResilientLlm(primary, retry=slow_retries, fallbacks=[backup], scheduler=clock)
    with pytest.raises(ModelError):
        _call(CircuitBreakerLlm(primary.inner, breaker=primary.breaker))  # opens the circuit

    assert _call(llm) == "from backup"  # no 60 s backoff: the clock never moved
    assert clock.clock == 0.0
