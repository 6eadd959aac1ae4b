"""RetryConfig: how a failed workflow node is tried again (google-adk 2.13's fields and defaults).

A node's attempts are one stream (``node_run.py``): a failed attempt emits its error event,
then, when :func:`should_retry` says so, waits :func:`retry_delay` seconds on the timer
scheduler (``rx.timer``, so tests run in virtual time) and subscribes the node afresh.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, Field, field_validator

from adk_rx.errors import ConfigurationError, StopError

__all__ = ["RetryConfig", "retry_delay", "should_retry"]


class RetryConfig(BaseModel):
    """How many times, after which errors and how long apart a node is tried again.

    Attributes:
        max_attempts: attempts in all, the first included (0 or 1: no retry; None: 5).
        initial_delay: seconds before the first retry (None: 1.0).
        max_delay: the longest wait between attempts (None: 60.0).
        backoff_factor: each wait is this times the previous one (None: 2.0).
        jitter: a random share of the wait added or taken off (None: 1.0; 0.0: none).
        exceptions: exception classes or class names to retry on (a subclass counts);
            None retries on every exception.
    """

    max_attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None
    backoff_factor: float | None = None
    jitter: float | None = None
    exceptions: list[str] | None = Field(default=None)

    @field_validator("exceptions", mode="before")
    @classmethod
    def _names(cls, value: Any) -> list[str] | None:
        if value is None:
            return None
        names: list[str] = []
        for item in value:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            else:
                raise ConfigurationError(
                    "exceptions must hold exception classes or their names, got "
                    f"{type(item).__name__}: {item!r}"
                )
        return names


def should_retry(error: BaseException, config: RetryConfig | None, attempt: int) -> bool:
    """Whether attempt number ``attempt`` (1-based), which raised ``error``, is tried again.

    A stop on purpose (a cancel, a deadline, a spent budget: StopError) is never retried.
    """
    if config is None or isinstance(error, StopError):
        return False
    max_attempts = 5 if config.max_attempts is None else config.max_attempts
    if attempt >= max_attempts:
        return False
    if config.exceptions is not None:
        names = {klass.__name__ for klass in type(error).__mro__ if klass is not object}
        if names.isdisjoint(config.exceptions):
            return False
    return True


def retry_delay(config: RetryConfig, attempt: int) -> float:
    """Seconds to wait after attempt number ``attempt`` failed, before the next one."""
    initial = 1.0 if config.initial_delay is None else config.initial_delay
    max_delay = 60.0 if config.max_delay is None else config.max_delay
    factor = 2.0 if config.backoff_factor is None else config.backoff_factor
    jitter = 1.0 if config.jitter is None else config.jitter
    delay = initial * factor ** max(0, attempt - 1)
    if jitter > 0.0:
        # Capped before the jitter, so the widest draw still lands on max_delay.
        delay = min(delay, max_delay / (1.0 + jitter))
        delay = max(0.0, delay + random.uniform(-jitter * delay, jitter * delay))
    return min(delay, max_delay)
