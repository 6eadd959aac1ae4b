"""InvocationShared: the state every context copy of one invocation shares.

An :class:`~adk_rx.context.InvocationContext` is copied for each sub-agent and branch; what
must be one per invocation (the model-call budget, the cancellation flag, callbacks' scratch
data, the resumable app's "stored yet?" barrier) lives here, referenced by every copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reactivex import Observable

from adk_rx.errors import LlmCallsLimitExceededError

__all__ = ["InvocationShared"]


class InvocationShared:
    """Per-invocation state shared by every context copy of that invocation.

    Attributes:
        callback_data: scratch space shared by callbacks and plugins of the invocation.
        cancelled: set once the invocation is cancelled (disposal or deadline).
    """

    __slots__ = (
        "_lock",
        "callback_data",
        "cancelled",
        "credential_answers",
        "credentials",
        "llm_calls",
        "max_llm_calls",
        "wait_stored",
    )

    def __init__(self, max_llm_calls: int) -> None:
        self._lock = threading.Lock()
        # Set by the Runner of a resumable app: a Completable for "this event id is stored".
        self.wait_stored: Callable[[str], Observable[Any]] | None = None
        self.llm_calls = 0
        self.max_llm_calls = max_llm_calls
        self.callback_data: dict[str, Any] = {}
        self.cancelled = threading.Event()
        # adk_rx.auth: the user's answers to credential requests, by request id (taken out of
        # the message before it is stored), and the credentials they gave, by credential key.
        self.credential_answers: dict[str, Any] = {}
        self.credentials: dict[str, Any] = {}

    def count_llm_call(self) -> None:
        """Counts one model call; raises when the invocation's budget is spent."""
        with self._lock:
            self.llm_calls += 1
            calls = self.llm_calls
        if 0 < self.max_llm_calls < calls:
            raise LlmCallsLimitExceededError(
                f"max number of llm calls limit of {self.max_llm_calls} exceeded; raise "
                "RunConfig.max_llm_calls (0 or less means unlimited) or fix the loop"
            )
