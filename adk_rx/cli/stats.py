"""TurnStats: a plugin that counts the model calls, tool calls and tokens of each turn."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from adk_rx.plugins import BasePlugin

__all__ = ["TurnStats", "TurnSummary"]


@dataclass(frozen=True)
class TurnSummary:
    """What one turn cost."""

    model_calls: int
    tool_calls: int
    tokens: int
    millis: float

    def __str__(self) -> str:
        parts = [
            _count(self.model_calls, "model call"),
            _count(self.tool_calls, "tool call"),
        ]
        if self.tokens:
            parts.append(_count(self.tokens, "token"))
        parts.append(f"{self.millis:.0f} ms")
        return " · ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class TurnStats(BasePlugin):
    """Counts through the plugin hooks, so every agent and every tool of the tree is seen."""

    def __init__(self) -> None:
        super().__init__(name="adk_rx_cli_turn_stats")
        self._lock = threading.Lock()
        self._model_calls = 0
        self._tool_calls = 0
        self._tokens = 0
        self._started = time.perf_counter()

    def start(self) -> None:
        """Starts a new turn: counters to zero, the clock restarted."""
        with self._lock:
            self._model_calls = self._tool_calls = self._tokens = 0
            self._started = time.perf_counter()

    def summary(self) -> TurnSummary:
        """The counts since :meth:`start`."""
        with self._lock:
            return TurnSummary(
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
                tokens=self._tokens,
                millis=(time.perf_counter() - self._started) * 1000,
            )

    def before_model_callback(self, **_: Any) -> None:
        with self._lock:
            self._model_calls += 1

    def after_model_callback(self, *, llm_response: Any, **_: Any) -> None:
        usage = getattr(llm_response, "usage_metadata", None)
        if usage is None or getattr(llm_response, "partial", False):
            return
        with self._lock:
            self._tokens += usage.total_token_count or 0

    def before_tool_callback(self, **_: Any) -> None:
        with self._lock:
            self._tool_calls += 1
