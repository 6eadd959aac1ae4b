"""Retries, backoff and fallbacks at the model seam, in virtual time."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
import reactivex as rx
import reactivex.operators as ops
from reactivex import Observable
from reactivex.testing import TestScheduler

from adk_rx.errors import ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import NO_RETRY, ResilientLlm, RetryNotice, RetryPolicy

from ._fakes import VirtualClock


class CallsLlm(BaseLlm):
    """A fake model whose n-th call plays the n-th given Observable."""

    def __init__(self, model: str, *calls: Observable[LlmResponse]) -> None:
        super().__init__(model=model)
        self._calls: Iterator[Observable[LlmResponse]] = iter(calls)
        self.count = 0

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        def next_call(_: object) -> Observable[LlmResponse]:
            self.count += 1
            return next(self._calls)

        return rx.defer(next_call)


def busy(status: int = 503) -> Observable[LlmResponse]:
    return rx.throw(ModelError(f"HTTP {status}: busy", status=status, retryable=True))


def ok(text: str = "ok") -> Observable[LlmResponse]:
    return rx.of(LlmResponse.text(text))


REQUEST = LlmRequest()
POLICY = RetryPolicy(max_attempts=4, initial_delay=1.0, multiplier=2.0, max_delay=3.0, jitter=0.0)


def resilient(inner: BaseLlm, clock: VirtualClock, **options: object) -> ResilientLlm:
    options.setdefault("retry", POLICY)
    return ResilientLlm(inner, scheduler=clock.scheduler, on_retry=clock.on_retry, **options)  # type: ignore[arg-type]


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    clock = VirtualClock()
    inner = CallsLlm("m", busy(), busy(), busy(), ok())

    [response] = clock.run(resilient(inner, clock).generate_content(REQUEST))

    assert response.get_text() == "ok"
    assert [n.delay for n in clock.notices] == [1.0, 2.0, 3.0]
    assert [n.attempt for n in clock.notices] == [1, 2, 3]
    assert clock.now == 6.0 and inner.count == 4


def test_nothing_happens_before_the_backoff_has_elapsed() -> None:
    scheduler = TestScheduler()
    inner = CallsLlm("m", busy(), ok())
    items: list[LlmResponse] = []
    ResilientLlm(inner, retry=POLICY, scheduler=scheduler).generate_content(REQUEST).subscribe(
        items.append
    )

    scheduler.advance_by(0.999)
    assert (inner.count, items) == (1, [])
    scheduler.advance_by(0.001)
    assert inner.count == 2 and [r.get_text() for r in items] == ["ok"]


def test_jitter_stays_within_its_fraction() -> None:
    policy = RetryPolicy(initial_delay=10.0, max_delay=10.0, jitter=0.2)
    rng = random.Random(7)

    waits = [policy.backoff(0, rng) for _ in range(200)]

    assert min(waits) >= 8.0 and max(waits) <= 12.0
    assert len(set(waits)) > 100  # they really vary


def test_giving_up_after_max_attempts_keeps_status_and_chains_the_last_error() -> None:
    clock = VirtualClock()
    inner = CallsLlm("m", busy(500), busy(500), busy(503), busy(503))

    with pytest.raises(ModelError) as caught:
        clock.run(resilient(inner, clock).generate_content(REQUEST))

    assert caught.value.status == 503
    assert "gave up after 4 attempt(s) in 6.0s" in str(caught.value)
    assert isinstance(caught.value.__cause__, ModelError)
    assert inner.count == 4


def test_total_time_is_bounded_even_with_attempts_left() -> None:
    clock = VirtualClock()
    policy = RetryPolicy(
        max_attempts=10, initial_delay=4.0, multiplier=1.0, jitter=0.0, max_elapsed=10.0
    )
    inner = CallsLlm("m", *(busy() for _ in range(10)))

    with pytest.raises(ModelError, match="gave up after 3 attempt"):
        clock.run(resilient(inner, clock, retry=policy).generate_content(REQUEST))

    assert clock.now == 8.0  # a third wait of 4s would pass the 10s budget


def test_a_retry_after_beyond_the_budget_fails_at_once() -> None:
    clock = VirtualClock()
    error = ModelError("HTTP 429: come back tomorrow", status=429, retryable=True)
    error.retry_after = 86400.0  # type: ignore[attr-defined]
    inner = CallsLlm("m", rx.throw(error), ok())

    with pytest.raises(ModelError, match=r"asked to wait 86400\.0s"):
        clock.run(resilient(inner, clock).generate_content(REQUEST))

    assert clock.notices == [] and inner.count == 1


def test_errors_that_are_not_retryable_pass_through_unchanged() -> None:
    clock = VirtualClock()
    bad_request = ModelError("HTTP 400: bad", status=400, retryable=False)
    missing_key = MissingCredentialsError("set KEY")
    for error in (bad_request, missing_key):
        inner = CallsLlm("m", rx.throw(error), ok())
        with pytest.raises(type(error)) as caught:
            clock.run(resilient(inner, clock).generate_content(REQUEST))
        assert caught.value is error and inner.count == 1


def test_a_stream_that_emitted_a_partial_is_never_retried() -> None:
    clock = VirtualClock()
    partial = LlmResponse.text("Hal", partial=True)
    cut = ModelError("connection lost", status="RemoteProtocolError", retryable=True)
    inner = CallsLlm("m", rx.concat(rx.of(partial), rx.throw(cut)), ok())
    seen: list[LlmResponse] = []

    with pytest.raises(ModelError) as caught:
        clock.run(
            resilient(inner, clock)
            .generate_content(REQUEST, stream=True)
            .pipe(ops.do_action(seen.append))
        )

    assert caught.value is cut and seen == [partial] and inner.count == 1


def test_fallback_takes_over_when_the_primary_is_exhausted() -> None:
    clock = VirtualClock()
    primary = CallsLlm("primary", busy(), busy(429), ok("primary again"))
    fallback = CallsLlm("fallback", ok("from fallback"))
    policy = RetryPolicy(max_attempts=2, initial_delay=1.0, jitter=0.0)
    llm = resilient(primary, clock, retry=policy, fallbacks=[fallback])

    [response] = clock.run(llm.generate_content(REQUEST))

    assert response.get_text() == "from fallback"
    assert [(n.model, n.next_model, n.delay) for n in clock.notices] == [
        ("primary", "primary", 1.0),
        ("primary", "fallback", 0.0),
    ]
    assert llm.model == "primary"

    # The next call starts on the primary again.
    [again] = clock.run(llm.generate_content(REQUEST))
    assert again.get_text() == "primary again" and fallback.count == 1


def test_no_fallback_on_an_error_that_is_not_retryable() -> None:
    clock = VirtualClock()
    primary = CallsLlm("primary", rx.throw(ModelError("HTTP 400", status=400)))
    fallback = CallsLlm("fallback", ok())

    with pytest.raises(ModelError, match="HTTP 400"):
        clock.run(
            resilient(primary, clock, retry=NO_RETRY, fallbacks=[fallback]).generate_content(
                REQUEST
            )
        )

    assert fallback.count == 0


def test_disposing_during_a_backoff_wait_cancels_the_next_attempt() -> None:
    scheduler = TestScheduler()
    inner = CallsLlm("m", busy(), ok())
    waiting = threading.Event()

    def on_retry(_: RetryNotice) -> None:
        waiting.set()

    subscription = (
        ResilientLlm(inner, retry=POLICY, scheduler=scheduler, on_retry=on_retry)
        .generate_content(REQUEST)
        .subscribe()
    )
    assert waiting.is_set()
    subscription.dispose()
    scheduler.advance_by(100.0)

    assert inner.count == 1


def test_every_call_is_cold_and_independent() -> None:
    clock = VirtualClock()
    inner = CallsLlm("m", busy(), ok("first"), ok("second"))
    llm = resilient(inner, clock)
    call = llm.generate_content(REQUEST)
    assert inner.count == 0  # building the call does nothing

    assert [r.get_text() for r in clock.run(call)] == ["first"]
    assert [r.get_text() for r in clock.run(call)] == ["second"]


@pytest.mark.parametrize(
    "options",
    [{"max_attempts": 0}, {"jitter": 1.5}, {"initial_delay": -1.0}, {"multiplier": 0.5}],
)
def test_invalid_policies_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        RetryPolicy(**options)  # type: ignore[arg-type]
