"""A circuit breaker for any :class:`BaseLlm`: stop calling a provider that keeps failing.

::

    closed     calls go through; ``failure_threshold`` failures in a row open the circuit
    open       calls fail at once with CircuitOpenError, for ``cooldown`` seconds
    half-open  one call (the probe) goes through, the others fail at once;
               the probe succeeds: closed again; it fails: open for another cooldown

    calls:   --#--#--#--X--X--X-- (cooldown) --p(ok)--o--o--
    state:   closed     open                  half    closed

A failure is a ``ModelError`` that is ``retryable`` (429, 5xx, a lost connection, a timeout);
a request the provider refuses as malformed says nothing about its health. Time is read from
a scheduler (a ``TestScheduler`` gives virtual time). One breaker may guard several wrappers
(pass the same :class:`CircuitBreaker`); by default each :class:`CircuitBreakerLlm` has its own.

With :class:`~adk_rx.models.resilience.ResilientLlm`, wrap each model in its own breaker:
an open circuit skips that model's retries and goes straight to the next fallback::

    ResilientLlm(CircuitBreakerLlm(primary), fallbacks=[CircuitBreakerLlm(backup)])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from reactivex import Observable, abc
from reactivex import create as rx_create
from reactivex.disposable import CompositeDisposable, Disposable

from adk_rx.errors import CircuitOpenError, ConfigurationError, ModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx import timer_scheduler

__all__ = ["CircuitBreaker", "CircuitBreakerLlm"]


def _is_failure(error: Exception) -> bool:
    return isinstance(error, ModelError) and error.retryable


class CircuitBreaker:
    """The breaker's state, shared by every call that goes through it.

    Args:
        name: names the guarded model in errors.
        failure_threshold: failures in a row that open the circuit.
        cooldown: seconds the circuit stays open before a probe may go through.
        is_failure: which errors count (default: retryable ``ModelError``s).
        scheduler: the clock (default: adk_rx's timer scheduler).
    """

    def __init__(
        self,
        name: str = "model",
        *,
        failure_threshold: int = 5,
        cooldown: float = 30.0,
        is_failure: Callable[[Exception], bool] = _is_failure,
        scheduler: abc.SchedulerBase | None = None,
    ) -> None:
        if failure_threshold < 1 or cooldown < 0:
            raise ConfigurationError("failure_threshold must be >= 1 and cooldown >= 0")
        self.name = name
        self.failure_threshold = failure_threshold
        self.cooldown = timedelta(seconds=cooldown)
        self.is_failure = is_failure
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: datetime | None = None
        self._probing = False

    @property
    def state(self) -> str:
        """``"closed"``, ``"open"`` or ``"half-open"``."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half-open" if self._now() >= self._opened_at + self.cooldown else "open"

    def admit(self) -> bool | None:
        """True: a normal call may go; False: the probe may go; None: fail fast."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._probing or self._now() < self._opened_at + self.cooldown:
                return None
            self._probing = True
            return False

    def succeeded(self) -> None:
        """A call ended well: the circuit closes."""
        with self._lock:
            self._failures, self._opened_at, self._probing = 0, None, False

    def failed(self, error: Exception, *, probe: bool) -> None:
        """A call failed: count it, and open (or re-open) the circuit when it should."""
        if not self.is_failure(error):
            self.abandoned(probe=probe)
            return
        with self._lock:
            self._failures += 1
            if probe or self._failures >= self.failure_threshold:
                self._opened_at = self._now()
            if probe:
                self._probing = False

    def abandoned(self, *, probe: bool) -> None:
        """A call ended without a verdict (disposed, or an error that does not count)."""
        if probe:
            with self._lock:
                self._probing = False

    def open_error(self) -> CircuitOpenError:
        """The error a call gets while the circuit is open."""
        with self._lock:
            opened = self._opened_at
        wait = 0.0 if opened is None else (opened + self.cooldown - self._now()).total_seconds()
        return CircuitOpenError(
            f"circuit open for {self.name}: {self._failures} failure(s) in a row; next probe "
            f"in {max(0.0, wait):.1f}s",
            status="circuit_open",
            retryable=True,
        )

    def _now(self) -> datetime:
        return (self._scheduler or timer_scheduler()).now


class CircuitBreakerLlm(BaseLlm):
    """Wraps a model with a circuit breaker (see the module docstring).

    Args:
        inner: the model to guard; this model reports its name.
        failure_threshold: failures in a row that open the circuit.
        cooldown: seconds before a probe call goes through.
        breaker: a breaker to share with other wrappers (then the two values above are its).
        scheduler: the clock (a ``TestScheduler`` for virtual time).
    """

    def __init__(
        self,
        inner: BaseLlm,
        *,
        failure_threshold: int = 5,
        cooldown: float = 30.0,
        breaker: CircuitBreaker | None = None,
        scheduler: abc.SchedulerBase | None = None,
    ) -> None:
        super().__init__(model=inner.model)
        self.inner = inner
        self.breaker = breaker or CircuitBreaker(
            inner.model, failure_threshold=failure_threshold, cooldown=cooldown, scheduler=scheduler
        )

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Calls the inner model, or fails at once with CircuitOpenError while open."""
        breaker = self.breaker

        def subscribe(
            observer: abc.ObserverBase[LlmResponse], _: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            admitted = breaker.admit()
            if admitted is None:
                observer.on_error(breaker.open_error())
                return Disposable()
            probe = not admitted
            ended = threading.Event()

            def on_error(error: Exception) -> None:
                ended.set()
                breaker.failed(error, probe=probe)
                observer.on_error(error)

            def on_completed() -> None:
                ended.set()
                breaker.succeeded()
                observer.on_completed()

            def on_dispose() -> None:
                if not ended.is_set():
                    breaker.abandoned(probe=probe)

            try:
                source = self.inner.generate_content(llm_request, stream)
            except Exception as exc:
                on_error(exc)
                return Disposable()
            inner = source.subscribe(observer.on_next, on_error, on_completed)
            return CompositeDisposable(inner, Disposable(on_dispose))

        return rx_create(subscribe)
