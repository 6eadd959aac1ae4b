"""Token usage per invocation, per agent and per session, summed from events.

Every model response that reports usage puts it on its event (``event.usage_metadata``), and
events are what a session stores, so a session's events are its cost ledger. Two ways to
read it:

- :func:`summarize_usage` over any events (a stored session's, or those a run emitted):

  >>> report = summarize_usage(session.events)
  >>> report.total.prompt_tokens, report.by_invocation[inv_id].candidates_tokens
  >>> report.by_agent["billing"].total_tokens

- :class:`UsagePlugin`, a plugin that keeps the same sums live for every invocation of a
  Runner (``plugin.usage(invocation_id)``), including the events of other sessions.

With a :class:`Pricing` (``summarize_usage(events, pricing=...)``) the report says what the
tokens cost, in total, per invocation and per agent (``report.cost``).

Partial (streamed) events are skipped: the final event of a streamed call carries the
usage of the whole call.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from google.genai import types

from adk_rx.events import Event
from adk_rx.plugins import BasePlugin
from adk_rx.pricing import ModelPrice, Pricing

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext

__all__ = [
    "ModelPrice",
    "Pricing",
    "TokenUsage",
    "UsageCost",
    "UsagePlugin",
    "UsageReport",
    "event_cost",
    "summarize_usage",
    "usage_metadata",
]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts summed over one or more model responses.

    Attributes:
        prompt_tokens: tokens sent to the model (``prompt_token_count``).
        candidates_tokens: tokens of the answers (``candidates_token_count``).
        thoughts_tokens: tokens the model spent thinking (``thoughts_token_count``).
        cached_tokens: prompt tokens served from the provider's cache
            (``cached_content_token_count``; part of ``prompt_tokens``).
        total_tokens: what the provider billed as the total (``total_token_count``).
        responses: how many responses reported usage.
    """

    prompt_tokens: int = 0
    candidates_tokens: int = 0
    thoughts_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    responses: int = 0

    @classmethod
    def of(cls, metadata: types.GenerateContentResponseUsageMetadata | None) -> TokenUsage:
        """The usage one response reported (all zero for None)."""
        if metadata is None:
            return _ZERO
        prompt = metadata.prompt_token_count or 0
        candidates = metadata.candidates_token_count or 0
        thoughts = metadata.thoughts_token_count or 0
        return cls(
            prompt_tokens=prompt,
            candidates_tokens=candidates,
            thoughts_tokens=thoughts,
            cached_tokens=metadata.cached_content_token_count or 0,
            total_tokens=metadata.total_token_count or (prompt + candidates + thoughts),
            responses=1,
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            candidates_tokens=self.candidates_tokens + other.candidates_tokens,
            thoughts_tokens=self.thoughts_tokens + other.thoughts_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            responses=self.responses + other.responses,
        )

    def __str__(self) -> str:
        if not self.responses:
            return "no token counts"
        text = f"{self.total_tokens} tokens ({self.prompt_tokens} in, {self.candidates_tokens} out"
        if self.thoughts_tokens:
            text += f", {self.thoughts_tokens} thinking"
        if self.cached_tokens:
            text += f", {self.cached_tokens} cached"
        return text + ")"


_ZERO = TokenUsage()


def usage_metadata(usage: TokenUsage) -> types.GenerateContentResponseUsageMetadata:
    """``usage`` as the usage metadata of one event (an AgentTool's child run, summed)."""
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.prompt_tokens,
        candidates_token_count=usage.candidates_tokens,
        thoughts_token_count=usage.thoughts_tokens or None,
        cached_content_token_count=usage.cached_tokens or None,
        total_token_count=usage.total_tokens,
    )


@dataclass(frozen=True)
class UsageCost:
    """What the tokens of a set of events cost, with a :class:`Pricing`.

    Each event is priced by the model that answered (``event.model_version``, as the provider
    reported it). An event whose model no pattern matches (or that names none, such as an
    AgentTool's summed child usage) costs nothing and its model is listed in ``unpriced``.

    Attributes:
        total: everything summed.
        by_invocation: invocation id -> its cost.
        by_agent: agent name (the event's author) -> its cost, over all invocations.
        unpriced: the model names that had usage but no price (``""``: not reported).
    """

    total: float = 0.0
    by_invocation: Mapping[str, float] = field(default_factory=dict)
    by_agent: Mapping[str, float] = field(default_factory=dict)
    unpriced: frozenset[str] = frozenset()


def event_cost(event: Event, pricing: Pricing) -> float:
    """What one event's reported usage costs (0.0 for a partial event or one without usage)."""
    if event.partial or event.usage_metadata is None:
        return 0.0
    return pricing.cost(event.model_version or "", event.usage_metadata)


def _cost_of(events: Iterable[Event], pricing: Pricing) -> UsageCost:
    total = 0.0
    by_invocation: dict[str, float] = {}
    by_agent: dict[str, float] = {}
    unpriced: set[str] = set()
    for event in events:
        if event.partial or event.usage_metadata is None:
            continue
        model = event.model_version or ""
        if pricing.price_of(model) is None:
            unpriced.add(model)
            continue
        cost = pricing.cost(model, event.usage_metadata)
        total += cost
        by_invocation[event.invocation_id] = by_invocation.get(event.invocation_id, 0.0) + cost
        by_agent[event.author] = by_agent.get(event.author, 0.0) + cost
    return UsageCost(total, by_invocation, by_agent, frozenset(unpriced))


@dataclass(frozen=True)
class UsageReport:
    """Token usage of a set of events, in total and broken down.

    Attributes:
        total: everything summed.
        by_invocation: invocation id -> its usage.
        by_agent: agent name (the event's author) -> its usage, over all invocations.
        by_invocation_agent: (invocation id, agent name) -> usage.
        cost: what the tokens cost (total, per invocation, per agent), when a pricing was
            given; else None.
    """

    total: TokenUsage = _ZERO
    by_invocation: Mapping[str, TokenUsage] = field(default_factory=dict)
    by_agent: Mapping[str, TokenUsage] = field(default_factory=dict)
    by_invocation_agent: Mapping[tuple[str, str], TokenUsage] = field(default_factory=dict)
    cost: UsageCost | None = None


def summarize_usage(events: Iterable[Event], pricing: Pricing | None = None) -> UsageReport:
    """Sums the usage metadata of ``events`` (partial events skipped).

    Args:
        events: any events, e.g. ``session.events`` or what ``runner.run(...)`` yielded.
        pricing: prices of the models' tokens; with it the report's ``cost`` is filled in.
    """
    events = list(events)
    tally = _Tally()
    for event in events:
        tally.add(event)
    report = tally.report()
    if pricing is None:
        return report
    return dataclasses.replace(report, cost=_cost_of(events, pricing))


class _Tally:
    __slots__ = ("by_invocation", "by_invocation_agent", "total")

    def __init__(self) -> None:
        self.total = _ZERO
        self.by_invocation: dict[str, TokenUsage] = {}
        self.by_invocation_agent: dict[tuple[str, str], TokenUsage] = {}

    def add(self, event: Event) -> None:
        if event.partial or event.usage_metadata is None:
            return
        usage = TokenUsage.of(event.usage_metadata)
        key = (event.invocation_id, event.author)
        self.total += usage
        self.by_invocation[key[0]] = self.by_invocation.get(key[0], _ZERO) + usage
        self.by_invocation_agent[key] = self.by_invocation_agent.get(key, _ZERO) + usage

    def report(self, invocation_id: str | None = None) -> UsageReport:
        pairs = {
            k: v
            for k, v in self.by_invocation_agent.items()
            if invocation_id is None or k[0] == invocation_id
        }
        by_agent: dict[str, TokenUsage] = {}
        for (_, agent), usage in pairs.items():
            by_agent[agent] = by_agent.get(agent, _ZERO) + usage
        if invocation_id is None:
            return UsageReport(self.total, dict(self.by_invocation), by_agent, pairs)
        total = self.by_invocation.get(invocation_id, _ZERO)
        return UsageReport(total, {invocation_id: total} if pairs else {}, by_agent, pairs)


class UsagePlugin(BasePlugin):
    """Keeps the token usage of every invocation of a Runner, live.

    Add it to ``Runner(plugins=[...])``; after (or during) a run, ``plugin.usage(inv_id)``
    reports that invocation's usage by agent. It sees the events the Runner emits, so an
    AgentTool's inner calls count when the tool's response event carries their usage.

    Args:
        name: the plugin's name.
        max_invocations: how many invocations to remember (the oldest are forgotten first).
    """

    def __init__(self, name: str = "usage", max_invocations: int = 10_000) -> None:
        super().__init__(name=name)
        self._lock = threading.Lock()
        self._tally = _Tally()
        self._order: list[str] = []
        self._max = max_invocations

    def on_event_callback(self, *, invocation_context: InvocationContext, event: Event) -> None:
        """Adds the event's usage (the Runner calls this for every event it emits)."""
        if event.partial or event.usage_metadata is None:
            return
        with self._lock:
            if event.invocation_id not in self._tally.by_invocation:
                self._order.append(event.invocation_id)
                if len(self._order) > self._max:
                    self._forget(self._order.pop(0))
            self._tally.add(event)

    def usage(self, invocation_id: str) -> UsageReport:
        """The usage of one invocation (empty when it reported none)."""
        with self._lock:
            return self._tally.report(invocation_id)

    def total(self) -> UsageReport:
        """The usage of every invocation remembered, in total and broken down."""
        with self._lock:
            return self._tally.report()

    def _forget(self, invocation_id: str) -> None:
        tally = self._tally
        tally.total = _ZERO
        tally.by_invocation.pop(invocation_id, None)
        for key in [k for k in tally.by_invocation_agent if k[0] == invocation_id]:
            del tally.by_invocation_agent[key]
        for usage in tally.by_invocation.values():
            tally.total += usage
