"""Budget: what one invocation may spend (model calls, tool runs, tokens, cost), and the check.

One :class:`Budget` per invocation, shared by every context copy of it (sub-agents,
transfers, parallel branches, workflow nodes) and by the child runs of its AgentTools, whose
model calls, tool runs and tokens count against the caller's limits.

The check runs where the work starts, before it starts::

    model call / tool run:  --check--call--...   within budget: the call starts
                            --check-X            over: BudgetExceededError, nothing starts

A call that would take a count (``max_llm_calls``, ``max_tool_calls``) past its limit does
not start; once the tokens or the cost reported so far have reached ``max_tokens`` or
``max_cost``, no further call starts (the response that crossed the line is kept). The
Runner turns the error into the stop record (``error_code="BUDGET_EXCEEDED"``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from adk_rx.errors import BudgetExceededError, LlmCallsLimitExceededError

if TYPE_CHECKING:
    from google.genai import types

    from adk_rx.run_config import RunConfig

__all__ = ["Budget", "budget_for", "share_budget"]

# One lock for every budget: each holds it for a few attribute reads and writes, never
# around a call out, so sharing it costs nothing, and an invocation makes no lock of its own.
_LOCK = threading.Lock()


class Budget:
    """The limits of one invocation and what it has used so far (thread-safe).

    Attributes:
        llm_calls: model calls started.
        tool_calls: tool runs started.
        tokens: prompt + candidate tokens the model responses reported.
        cost: what those tokens cost (with ``RunConfig.pricing``).
        checks_tools: a tool run has something to check (a tool-call, token or cost limit).
        tracks_usage: model responses' usage has to be added (a token or cost limit).
    """

    __slots__ = (
        "checks_tools",
        "config",
        "cost",
        "llm_calls",
        "tokens",
        "tool_calls",
        "tracks_usage",
    )

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.llm_calls = 0
        self.tool_calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.tracks_usage = config.max_tokens is not None or config.max_cost is not None
        self.checks_tools = self.tracks_usage or config.max_tool_calls is not None

    def count_llm_call(self) -> None:
        """Counts one model call about to start.

        Raises:
            BudgetExceededError: the call would go over a limit (LlmCallsLimitExceededError
                for ``max_llm_calls``); it is not counted.
        """
        config = self.config
        with _LOCK:
            allowed = config.max_llm_calls
            if 0 < allowed <= self.llm_calls:
                raise LlmCallsLimitExceededError(
                    f"max number of llm calls limit of {allowed} exceeded; raise "
                    "RunConfig.max_llm_calls (0 or less means unlimited) or fix the loop",
                    limit="max_llm_calls",
                    allowed=allowed,
                    used=self.llm_calls,
                )
            if self.tracks_usage:
                self._check_usage()
            self.llm_calls += 1

    def count_tool_call(self) -> None:
        """Counts one tool run about to start.

        Raises:
            BudgetExceededError: the run would go over a limit; it is not counted.
        """
        with _LOCK:
            allowed = self.config.max_tool_calls
            if allowed is not None and self.tool_calls >= allowed:
                raise _exceeded("max_tool_calls", allowed, self.tool_calls)
            if self.tracks_usage:
                self._check_usage()
            self.tool_calls += 1

    def add_usage(self, model: str, usage: types.GenerateContentResponseUsageMetadata) -> None:
        """Adds what one complete model response reported (call it when ``tracks_usage``)."""
        tokens = (usage.prompt_token_count or 0) + (usage.candidates_token_count or 0)
        pricing = self.config.pricing
        cost = 0.0 if pricing is None else pricing.cost(model, usage)
        with _LOCK:
            self.tokens += tokens
            self.cost += cost

    def _check_usage(self) -> None:
        config = self.config
        if config.max_tokens is not None and self.tokens >= config.max_tokens:
            raise _exceeded("max_tokens", config.max_tokens, self.tokens)
        if config.max_cost is not None and self.cost >= config.max_cost:
            raise _exceeded("max_cost", config.max_cost, self.cost)


def _exceeded(limit: str, allowed: float, used: float) -> BudgetExceededError:
    return BudgetExceededError(
        f"budget exceeded: {limit}={allowed} (used {used:g}); raise RunConfig.{limit} or "
        "give the agent less to do",
        limit=limit,
        allowed=allowed,
        used=used,
    )


def budget_for(config: RunConfig) -> Budget:
    """The budget of an invocation run with ``config``: the caller's, for an AgentTool's
    child run (see :func:`share_budget`), else a new one."""
    # Read from pydantic's private store directly: ``config._shared_budget`` goes through
    # BaseModel.__getattr__ (four calls, on every invocation).
    private = config.__pydantic_private__
    shared = None if private is None else private.get("_shared_budget")
    return Budget(config) if shared is None else shared


def share_budget(config: RunConfig, budget: Budget) -> RunConfig:
    """A copy of ``config`` whose invocation spends ``budget`` (an AgentTool's child run)."""
    copy = config.model_copy()
    copy._shared_budget = budget  # pyright: ignore[reportPrivateUsage]
    return copy
