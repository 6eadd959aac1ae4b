"""RateLimitedLlm: requests and tokens per minute, waiting on a timer, in virtual time."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from reactivex.testing import TestScheduler

from adk_rx.errors import ConfigurationError
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.models.rate_limit import RateLimitedLlm, RateLimiter, shared_limiter
from adk_rx.testing import ScriptedLlm


def _request(text: str = "hi") -> LlmRequest:
    return LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])


def _reply(tokens: int | None = None) -> LlmResponse:
    usage = (
        None
        if tokens is None
        else types.GenerateContentResponseUsageMetadata(total_token_count=tokens)
    )
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="ok")]), usage_metadata=usage
    )


def _call(llm: RateLimitedLlm, done: list[float], clock: TestScheduler) -> Any:
    return llm.generate_content(_request()).subscribe(on_completed=lambda: done.append(clock.clock))


def test_calls_over_the_request_budget_wait_for_the_window_without_a_thread() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_reply(), _reply(), _reply()])
    llm = RateLimitedLlm(inner, limiter=RateLimiter(requests_per_minute=2, scheduler=clock))
    done: list[float] = []

    for _ in range(3):
        _call(llm, done, clock)  # returns at once: the third call waits on a timer

    assert done == [0.0, 0.0]
    clock.advance_to(59.0)
    assert len(inner.requests) == 2
    clock.advance_to(60.0)
    assert done == [0.0, 0.0, 60.0]


def test_reported_token_usage_holds_back_the_next_call() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_reply(tokens=90), _reply(tokens=5)])
    llm = RateLimitedLlm(inner, limiter=RateLimiter(tokens_per_minute=90, scheduler=clock))
    done: list[float] = []

    _call(llm, done, clock)
    clock.advance_to(10.0)
    _call(llm, done, clock)  # 90 used: no room for this call

    assert done == [0.0]
    clock.advance_to(60.0)
    assert done == [0.0, 60.0]


def test_a_waiting_call_disposed_gives_its_place_to_the_next() -> None:
    clock = TestScheduler()
    inner = ScriptedLlm([_reply(), _reply()])
    llm = RateLimitedLlm(inner, limiter=RateLimiter(requests_per_minute=1, scheduler=clock))
    done: list[float] = []
    _call(llm, done, clock)
    gave_up = _call(llm, done, clock)
    _call(llm, done, clock)

    gave_up.dispose()
    clock.advance_to(60.0)

    assert done == [0.0, 60.0]
    assert len(inner.requests) == 2


def test_wrappers_of_one_model_share_the_process_wide_budget() -> None:
    name = "shared-model-for-test"
    first = RateLimitedLlm(ScriptedLlm([], model=name), requests_per_minute=7)
    second = RateLimitedLlm(ScriptedLlm([], model=name), requests_per_minute=7)

    assert first.limiter is second.limiter is shared_limiter(name, 7, None)
    with pytest.raises(ConfigurationError, match="already rate limited"):
        RateLimitedLlm(ScriptedLlm([], model=name), requests_per_minute=8)
