"""A client-side rate limiter for any :class:`BaseLlm`: requests and tokens per minute.

Every call takes a place in one FIFO queue per limiter and starts once, over the last 60
seconds, fewer than ``requests_per_minute`` calls started and the tokens they used plus this
call's estimate fit in ``tokens_per_minute``. A call that does not fit waits on a timer set
for the moment the oldest calls leave the window: no thread is held while it waits, and a
``TestScheduler`` drives it in virtual time. A call's tokens are estimated from its request
(about four characters a token) until the model reports its usage, which then replaces the
estimate. ::

    requests_per_minute=2
    calls:    a  b  c
    started:  a  b  . . . . (60 s after a) c

By default every :class:`RateLimitedLlm` for one model name shares one limiter in the process,
so all runs, agents and wrappers calling that model draw on the same budget.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from reactivex import Observable, abc
from reactivex import create as rx_create
from reactivex.disposable import CompositeDisposable, Disposable, SerialDisposable

from adk_rx.errors import ConfigurationError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx import timer_scheduler

__all__ = ["RateLimitedLlm", "RateLimiter", "estimate_tokens", "shared_limiter"]

_WINDOW = timedelta(seconds=60)


def estimate_tokens(llm_request: LlmRequest) -> int:
    """A rough token count of a request: its text and call arguments, four characters each."""
    chars = 0
    for content in llm_request.contents:
        for part in content.parts or []:
            if part.text:
                chars += len(part.text)
            elif part.function_call is not None or part.function_response is not None:
                chars += len(part.model_dump_json(exclude_none=True))
    return chars // 4 + 1


class _Use:
    """One started call in the window: when it started and the tokens it counts for."""

    __slots__ = ("at", "tokens")

    def __init__(self, at: datetime, tokens: int) -> None:
        self.at, self.tokens = at, tokens


class _Waiter:
    __slots__ = ("go", "tokens")

    def __init__(self, tokens: int, go: Callable[[_Use], None]) -> None:
        self.tokens, self.go = tokens, go


class RateLimiter:
    """A budget of requests and tokens per minute, shared by the calls that use it.

    Args:
        requests_per_minute: calls that may start in any 60 seconds (None: no limit).
        tokens_per_minute: tokens the calls started in any 60 seconds may use (None: no limit).
        scheduler: the clock and the timers (default: adk_rx's timer scheduler).
    """

    def __init__(
        self,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> None:
        for value in (requests_per_minute, tokens_per_minute):
            if value is not None and value < 1:
                raise ConfigurationError("rate limits must be at least 1 per minute (or None)")
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._uses: deque[_Use] = deque()
        self._waiters: deque[_Waiter] = deque()
        self._timer = SerialDisposable()
        self._wake: datetime | None = None

    def acquire(self, tokens: int, go: Callable[[_Use], None]) -> abc.DisposableBase:
        """Calls ``go(use)`` once the call may start (perhaps at once); disposing the result
        gives up the place in the queue. Report the real usage with :meth:`settle`."""
        waiter = _Waiter(max(0, tokens), go)
        with self._lock:
            self._waiters.append(waiter)
        self._pump()

        def cancel() -> None:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
            self._pump()

        return Disposable(cancel)

    def settle(self, use: _Use, tokens: int | None) -> None:
        """Replaces a started call's estimate with the tokens the model reported."""
        if tokens is not None:
            with self._lock:
                use.tokens = tokens
        self._pump()

    def _clock(self) -> abc.SchedulerBase:
        return self._scheduler or timer_scheduler()

    def _pump(self, *_: Any) -> None:
        started: list[tuple[_Waiter, _Use]] = []
        clock = self._clock()
        with self._lock:
            now = clock.now
            while self._uses and self._uses[0].at + _WINDOW <= now:
                self._uses.popleft()
            while self._waiters:
                head = self._waiters[0]
                wake = self._fits_at(head.tokens, now)
                if wake is not None:
                    if self._wake is None or wake < self._wake or self._wake <= now:
                        self._wake = wake
                        self._timer.disposable = clock.schedule_relative(
                            max(0.0, (wake - now).total_seconds()), self._pump
                        )
                    break
                self._waiters.popleft()
                use = _Use(now, head.tokens)
                self._uses.append(use)
                started.append((head, use))
        for waiter, use in started:
            waiter.go(use)

    def _fits_at(self, tokens: int, now: datetime) -> datetime | None:
        """None when a call of ``tokens`` may start now, else when it may."""
        wake = now
        rpm, tpm = self.requests_per_minute, self.tokens_per_minute
        uses = self._uses
        if rpm is not None and len(uses) >= rpm:
            wake = max(wake, uses[len(uses) - rpm].at + _WINDOW)
        if tpm is not None:
            need = min(tokens, tpm)  # a call larger than the budget waits for an empty window
            used = sum(u.tokens for u in uses)
            for use in uses:
                if used + need <= tpm:
                    break
                used -= use.tokens
                wake = max(wake, use.at + _WINDOW)
        return None if wake <= now else wake


_SHARED: dict[str, RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(
    model: str, requests_per_minute: int | None, tokens_per_minute: int | None
) -> RateLimiter:
    """The process-wide limiter of ``model`` (created with these limits on first use).

    Raises:
        ConfigurationError: the model's limiter exists with other limits.
    """
    with _SHARED_LOCK:
        limiter = _SHARED.get(model)
        if limiter is None:
            limiter = _SHARED[model] = RateLimiter(requests_per_minute, tokens_per_minute)
        elif (limiter.requests_per_minute, limiter.tokens_per_minute) != (
            requests_per_minute,
            tokens_per_minute,
        ):
            raise ConfigurationError(
                f"model {model!r} is already rate limited to {limiter.requests_per_minute} "
                f"requests and {limiter.tokens_per_minute} tokens per minute; pass "
                "limiter=RateLimiter(...) to give this wrapper a budget of its own"
            )
        return limiter


class RateLimitedLlm(BaseLlm):
    """Wraps a model so its calls keep within requests and tokens per minute.

    Args:
        inner: the model to limit; this model reports its name.
        requests_per_minute: calls per 60 seconds (None: no limit).
        tokens_per_minute: tokens per 60 seconds (None: no limit).
        limiter: the budget to draw on; default the process-wide one of ``inner.model``
            (:func:`shared_limiter`).
    """

    def __init__(
        self,
        inner: BaseLlm,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        *,
        limiter: RateLimiter | None = None,
    ) -> None:
        super().__init__(model=inner.model)
        self.inner = inner
        self.limiter = limiter or shared_limiter(
            inner.model, requests_per_minute, tokens_per_minute
        )

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Waits for the budget (on a timer), then calls the inner model."""
        limiter = self.limiter

        def subscribe(
            observer: abc.ObserverBase[LlmResponse], _: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            serial = SerialDisposable()

            def start(use: _Use) -> None:
                reported: list[int | None] = [None]

                def on_next(response: LlmResponse) -> None:
                    usage = response.usage_metadata
                    if usage is not None and usage.total_token_count:
                        reported[0] = usage.total_token_count
                    observer.on_next(response)

                def on_error(error: Exception) -> None:
                    limiter.settle(use, reported[0])
                    observer.on_error(error)

                def on_completed() -> None:
                    limiter.settle(use, reported[0])
                    observer.on_completed()

                try:
                    source = self.inner.generate_content(llm_request, stream)
                except Exception as exc:
                    on_error(exc)
                    return
                serial.disposable = source.subscribe(on_next, on_error, on_completed)

            # Apart from ``serial``: the call may start inside acquire() itself.
            waiting = limiter.acquire(estimate_tokens(llm_request), start)
            return CompositeDisposable(waiting, serial)

        return rx_create(subscribe)
