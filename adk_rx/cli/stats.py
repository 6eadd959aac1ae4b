"""TurnStats: a plugin that counts the model calls, tool calls, token usage (and, when the app
has a pricing, the cost) of each turn."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from adk_rx.events import Event
from adk_rx.plugins import BasePlugin
from adk_rx.pricing import Pricing
from adk_rx.usage import TokenUsage, event_cost

__all__ = ["TurnStats", "TurnSummary"]


@dataclass(frozen=True)
class TurnSummary:
    """What one turn cost."""

    model_calls: int
    tool_calls: int
    usage: TokenUsage
    millis: float
    cost: float | None = None  # with the app's pricing

    @property
    def tokens(self) -> int:
        """All tokens the turn's model responses reported."""
        return self.usage.total_tokens

    def __str__(self) -> str:
        parts = [
            _count(self.model_calls, "model call"),
            _count(self.tool_calls, "tool call"),
        ]
        if self.usage.responses:
            parts.append(str(self.usage))
        if self.cost is not None:
            parts.append(f"cost {self.cost:.4f}")
        parts.append(f"{self.millis:.0f} ms")
        return " · ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class TurnStats(BasePlugin):
    """Counts through the plugin hooks, so every agent and every tool of the tree is seen."""

    def __init__(self, pricing: Pricing | None = None) -> None:
        super().__init__(name="adk_rx_cli_turn_stats")
        self._pricing = pricing
        self._cost = 0.0
        self._lock = threading.Lock()
        self._model_calls = 0
        self._tool_calls = 0
        self._usage = TokenUsage()
        self._started = time.perf_counter()

    def start(self) -> None:
        """Starts a new turn: counters to zero, the clock restarted."""
        with self._lock:
            self._model_calls = self._tool_calls = 0
            self._usage = TokenUsage()
            self._cost = 0.0
            self._started = time.perf_counter()

    def summary(self) -> TurnSummary:
        """The counts since :meth:`start`."""
        with self._lock:
            return TurnSummary(
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
                usage=self._usage,
                millis=(time.perf_counter() - self._started) * 1000,
                cost=None if self._pricing is None else self._cost,
            )

    def before_model_callback(self, **_: Any) -> None:
        with self._lock:
            self._model_calls += 1

    def on_event_callback(self, *, event: Event, **_: Any) -> None:
        # The same sums as adk_rx.usage.summarize_usage over the turn's events.
        if event.partial or event.usage_metadata is None:
            return
        cost = 0.0 if self._pricing is None else event_cost(event, self._pricing)
        with self._lock:
            self._usage += TokenUsage.of(event.usage_metadata)
            self._cost += cost

    def before_tool_callback(self, **_: Any) -> None:
        with self._lock:
            self._tool_calls += 1
