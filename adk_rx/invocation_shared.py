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


class InvocationShared:
    """Per-invocation state shared by every context copy of that invocation.

    Attributes:
        budget: the invocation's limits and what it used (an AgentTool's child run shares
            its caller's).
        callback_data: scratch space shared by callbacks and plugins of the invocation.
        cancelled: True once the invocation is cancelled (disposal or deadline); a plain
            flag, set once and only read after (no one waits on it).
        loop_exits: ids of escalating events a LoopAgent has consumed (its own exit), so an
            enclosing loop goes on.
        tool_answers: responses of idempotent tools' calls, for ``dedupe_tool_calls``.
    """

    __slots__ = (
        "budget",
        "callback_data",
        "cancelled",
        "credential_answers",
        "credential_lock",
        "credentials",
        "loop_exits",
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
        self.credential_lock = threading.RLock()  # one token request at a time per invocation
        self.loop_exits: set[str] = set()
        # RunConfig.dedupe_tool_calls: (tool name, canonical arguments) -> (call id, response).
        self.tool_answers: dict[tuple[str, str], tuple[str, Any]] = {}

    @property
    def llm_calls(self) -> int:
        """Model calls started so far."""
        return self.budget.llm_calls

    def count_llm_call(self) -> None:
        """Counts one model call; raises BudgetExceededError when a limit is reached."""
        self.budget.count_llm_call()
