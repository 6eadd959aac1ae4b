"""InvocationShared: the state every context copy of one invocation shares.

An :class:`~adk_rx.context.InvocationContext` is copied for each sub-agent and branch; what
must be one per invocation (the budget, the cancellation flag, callbacks' scratch
data, the resumable app's "stored yet?" barrier) lives here, referenced by every copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reactivex import Observable

from adk_rx.budget import Budget

__all__ = ["InvocationShared"]

# Guards the first use of a lazily made field, should two threads (parallel tools or branches)
# reach for it at the same time; taken once per field and invocation, and only by those that
# need the field at all.
_MAKING = threading.Lock()


class InvocationShared:
    """Per-invocation state shared by every context copy of that invocation.

    Attributes:
        budget: the invocation's limits and what it used (an AgentTool's child run shares
            its caller's).
        callback_data: scratch space shared by callbacks and plugins of the invocation.
        cancelled: True once the invocation is cancelled (disposal or deadline); a plain
            flag, set once and only read after (no one waits on it).
        tool_answers: responses of idempotent tools' calls, for ``dedupe_tool_calls``.
    """

    __slots__ = (
        "_credential_lock",
        "_loop_exits",
        "budget",
        "callback_data",
        "cancelled",
        "credential_answers",
        "credentials",
        "tool_answers",
        "wait_stored",
    )

    def __init__(self, budget: Budget) -> None:
        # Set by the Runner of a resumable app: a Completable for "this event id is stored".
        self.wait_stored: Callable[[str], Observable[Any]] | None = None
        self.budget = budget
        self.callback_data: dict[str, Any] = {}
        self.cancelled = False
        # adk_rx.auth: the user's answers to credential requests, by request id (taken out of
        # the message before it is stored), and the credentials they gave, by credential key.
        self.credential_answers: dict[str, Any] = {}
        self.credentials: dict[str, Any] = {}
        # Made on first use: a lock and a set are objects the GC tracks, and most invocations
        # never request a token or run a loop (a thousand waiting runs would keep 2,000).
        self._credential_lock: threading.RLock | None = None
        self._loop_exits: set[str] | None = None
        # RunConfig.dedupe_tool_calls: (tool name, canonical arguments) -> (call id, response).
        self.tool_answers: dict[tuple[str, str], tuple[str, Any]] = {}

    @property
    def credential_lock(self) -> threading.RLock:
        """One token request at a time per invocation (made on first use)."""
        lock = self._credential_lock
        if lock is None:
            with _MAKING:
                lock = self._credential_lock
                if lock is None:
                    lock = self._credential_lock = threading.RLock()
        return lock

    @property
    def loop_exits(self) -> set[str]:
        """Ids of escalating events a LoopAgent has consumed (its own exit), so an enclosing
        loop goes on (made on first use)."""
        exits = self._loop_exits
        if exits is None:
            with _MAKING:
                exits = self._loop_exits
                if exits is None:
                    exits = self._loop_exits = set()
        return exits

    @property
    def llm_calls(self) -> int:
        """Model calls started so far."""
        return self.budget.llm_calls

    def count_llm_call(self) -> None:
        """Counts one model call; raises BudgetExceededError when a limit is reached."""
        self.budget.count_llm_call()
