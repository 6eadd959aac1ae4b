"""Retries with backoff and fallback models, for any :class:`BaseLlm`.

``retrying`` is the operator the provider adapters use on their own calls; ``ResilientLlm``
puts the same behaviour around any model (a custom provider, a replayed one) and adds
fallback models. A call is retried only when:

* it failed with a ``ModelError`` whose ``retryable`` is true (429, 5xx, a lost connection);
* nothing was emitted yet: once a streamed call delivered a partial, the consumer has seen
  text that a new attempt might not repeat, so the error goes downstream as is;
* attempts and total time are left (``RetryPolicy.max_attempts``, ``max_elapsed``).

The wait is exponential with jitter, or exactly what the provider asked for in
``Retry-After``. Timers run on a scheduler, so a ``TestScheduler`` drives them in virtual
time. A timeline with two failures and a success (``#`` an error, ``~`` a backoff wait)::

    attempt 1:  --#
    attempt 2:       ~~1s~~--#
    attempt 3:                   ~~~~2s~~~~--a--b--|
    result:     -----------------------------a--b--|

When a model has used up its attempts on retryable errors, the next fallback model gets the
request (with its own attempts, within the same total time). Each call starts on the primary.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reactivex import Observable, abc

from adk_rx.errors import CircuitOpenError, ConfigurationError, ModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.provider_errors import retry_after
from adk_rx.rx import timer_scheduler
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable, LaterObservable
from adk_rx.rx._engine.retry_decided import Retry, retry_decided

__all__ = [
    "DEFAULT_RETRY",
    "NO_RETRY",
    "ResilientLlm",
    "RetryNotice",
    "RetryPolicy",
    "retrying",
]

_log = logging.getLogger("adk_rx.models")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a model call is retried.

    Attributes:
        max_attempts: attempts per model, the first one included (1 turns retries off).
        initial_delay: seconds before the first retry.
        multiplier: each further retry waits this many times longer.
        max_delay: cap on one computed wait (a provider's ``Retry-After`` may exceed it).
        jitter: the wait varies randomly by up to this fraction either way (0 to 1), so
            clients that failed together do not retry together.
        max_elapsed: seconds from the first attempt after which no new attempt starts.
        honor_retry_after: wait what the provider asks (``Retry-After``, Google
            ``RetryInfo``) instead of the computed wait.
    """

    max_attempts: int = 4
    initial_delay: float = 1.0
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: float = 0.2
    max_elapsed: float = 60.0
    honor_retry_after: bool = True

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError("RetryPolicy.max_attempts must be at least 1")
        if not 0.0 <= self.jitter <= 1.0:
            raise ConfigurationError("RetryPolicy.jitter must be between 0 and 1")
        if min(self.initial_delay, self.max_delay, self.max_elapsed) < 0 or self.multiplier < 1:
            raise ConfigurationError("RetryPolicy delays must be >= 0 and multiplier >= 1")

    def backoff(self, retry_index: int, rng: random.Random | None = None) -> float:
        """The computed wait before retry number ``retry_index`` (0 for the first retry)."""
        base = min(self.max_delay, self.initial_delay * self.multiplier**retry_index)
        if self.jitter == 0.0:
            return base
        draw = (rng or random).random()
        return max(0.0, base * (1.0 + self.jitter * (2.0 * draw - 1.0)))


DEFAULT_RETRY = RetryPolicy()
"""What the provider adapters use unless told otherwise."""

NO_RETRY = RetryPolicy(max_attempts=1)
"""One attempt per model; a ``ResilientLlm`` with it still falls back."""


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """Passed to ``on_retry`` before each retry or fallback.

    Attributes:
        model: the model that failed.
        attempt: the failed attempt's number on that model (1 for the first).
        error: why it failed.
        delay: seconds until the next attempt.
        next_model: the model the next attempt goes to (another one on a fallback).
    """

    model: str
    attempt: int
    error: ModelError
    delay: float
    next_model: str


Attempt = tuple[str, Callable[[], Observable[LlmResponse]]]
"""A model name and a factory for one cold attempt on it."""


def retrying(
    attempts: Sequence[Attempt],
    policy: RetryPolicy | None = DEFAULT_RETRY,
    *,
    scheduler: abc.SchedulerBase | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
    rng: random.Random | None = None,
    later: bool = False,
) -> Observable[LlmResponse]:
    """Runs the first attempt factory, retrying and then falling back along ``attempts``.

    Args:
        attempts: ``(model name, factory)`` pairs, primary first; each factory returns a cold
            Observable for one try.
        policy: the retry policy per model; ``None`` means one attempt per model.
        scheduler: where backoff timers run; default the shared timer scheduler of
            :mod:`adk_rx.rx` (pass a ``TestScheduler`` for virtual time).
        on_retry: called with a :class:`RetryNotice` before each wait (e.g. to count retries).
        rng: the source of jitter.
        later: every attempt hands its work off (a task, a worker), so the Observable never
            answers while subscribed; it is then a ``LaterObservable``, which the step passes
            on as it is instead of holding what it emits.

    Returns:
        A cold Observable. Giving up errors it with a ``ModelError`` that says how many
        attempts failed, chained from the last error.
    """
    if not attempts:
        raise ConfigurationError("retrying needs at least one model")
    chosen = policy or NO_RETRY

    clock = scheduler or timer_scheduler()

    def subscribe(
        observer: abc.ObserverBase[LlmResponse], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        # A plan per subscription, as ``rx.defer`` would make it, with the observer handed
        # on as it is (the subscribe that called this one guards it): no second guarded
        # subscription, with its auto-detach observer and locks, kept while the call waits.
        plan = _RetryPlan(attempts, chosen, clock, on_retry, rng)
        return sync.forward(
            retry_decided(plan.next_attempt, plan.decide, clock), observer, scheduler
        )

    return LaterObservable(subscribe) if later else AwaitableObservable(subscribe)


class _RetryPlan:
    """The decisions of one subscription: which model, which attempt, when to give up."""

    def __init__(
        self,
        attempts: Sequence[Attempt],
        policy: RetryPolicy,
        scheduler: abc.SchedulerBase,
        on_retry: Callable[[RetryNotice], None] | None,
        rng: random.Random | None,
    ) -> None:
        self._attempts = attempts
        self._policy = policy
        self._scheduler = scheduler
        self._on_retry = on_retry
        self._rng = rng
        self._model_index = 0
        self._attempt = 0  # attempts made on the current model
        self._total = 0  # attempts made on all models
        self._started_at = scheduler.now

    def next_attempt(self) -> Observable[LlmResponse]:
        self._attempt += 1
        self._total += 1
        _, factory = self._attempts[self._model_index]
        return factory()

    def decide(self, error: Exception) -> Retry | Exception | None:
        """None: pass ``error`` on; an exception: give up with it; else a Retry."""
        decision = self._decide(error)
        if decision is None or isinstance(decision, Exception):
            return decision
        delay, notice = decision
        _log.info(
            "model %s failed (attempt %d: %s); next attempt on %s in %.2fs",
            notice.model,
            notice.attempt,
            notice.error,
            notice.next_model,
            delay,
        )
        return Retry(delay, lambda: self._notify(notice))

    def _notify(self, notice: RetryNotice) -> None:
        if self._on_retry is None:
            return
        try:
            self._on_retry(notice)
        except Exception:  # an observer of retries must not break the call it observes
            _log.exception("an on_retry callback raised")

    def _decide(self, error: Exception) -> tuple[float, RetryNotice] | Exception | None:
        if not isinstance(error, ModelError) or not error.retryable:
            return None
        policy = self._policy
        elapsed = (self._scheduler.now - self._started_at).total_seconds()
        remaining = policy.max_elapsed - elapsed
        model = self._attempts[self._model_index][0]
        asked = retry_after(error) if policy.honor_retry_after else None
        wait = asked if asked is not None else policy.backoff(self._attempt - 1, self._rng)
        failed_attempt = self._attempt
        # An open circuit fails every attempt at once: go straight to the next model.
        may_retry = not isinstance(error, CircuitOpenError)
        if may_retry and self._attempt < policy.max_attempts and wait <= remaining:
            return wait, RetryNotice(model, failed_attempt, error, wait, model)
        if self._model_index + 1 < len(self._attempts) and remaining > 0:
            # The next model owes nothing to this one's Retry-After: go at once.
            self._model_index += 1
            self._attempt = 0
            next_model = self._attempts[self._model_index][0]
            return 0.0, RetryNotice(model, failed_attempt, error, 0.0, next_model)
        reason = (
            f"the provider asked to wait {wait:.1f}s, beyond the {policy.max_elapsed:.0f}s budget"
            if wait > remaining and asked is not None
            else f"gave up after {self._total} attempt(s) in {elapsed:.1f}s"
        )
        final = ModelError(f"{error} ({reason})", status=error.status, retryable=True)
        final.__cause__ = error
        return final


class ResilientLlm(BaseLlm):
    """Wraps a model with retries and fallback models.

    The provider adapters already retry their own calls (``retry=None`` on them turns that
    off); wrap them as ``ResilientLlm(primary, retry=None, fallbacks=[...])`` to add fallbacks
    without retrying twice. For a custom model, keep the default policy.

    Args:
        inner: the primary model; this model reports its name.
        retry: the policy per model; ``None`` gives each model one attempt.
        fallbacks: models tried in order after the primary has used up its attempts on
            retryable errors. Every call starts on the primary again.
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry or fallback.
        rng: the source of jitter (seed it for reproducible waits).
    """

    def __init__(
        self,
        inner: BaseLlm,
        *,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        fallbacks: Sequence[BaseLlm] = (),
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(model=inner.model)
        self.inner = inner
        self.retry = retry
        self.fallbacks = tuple(fallbacks)
        self.scheduler = scheduler
        self.on_retry = on_retry
        self.rng = rng

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Calls the primary model, retrying and falling back as configured."""

        def attempt(model: BaseLlm) -> Attempt:
            return model.model, lambda: model.generate_content(llm_request, stream)

        return retrying(
            [attempt(m) for m in (self.inner, *self.fallbacks)],
            self.retry,
            scheduler=self.scheduler,
            on_retry=self.on_retry,
            rng=self.rng,
        )
