"""Pricing: what a model's tokens cost, for budgets (``RunConfig.max_cost``) and reports.

A :class:`Pricing` maps model-name patterns to a :class:`ModelPrice`; the first pattern that
matches the whole model name wins, so put the specific patterns first::

    pricing = Pricing({
        r"gemini-2\\.5-pro.*": ModelPrice(input_per_million=1.25, output_per_million=10.0),
        r"gemini-.*": ModelPrice(input_per_million=0.10, output_per_million=0.40),
    })
    pricing.cost("gemini-2.5-flash", usage_metadata)   # dollars (or whatever unit you priced in)

Output tokens are the answer's plus the thinking tokens (providers bill both as output);
cached prompt tokens cost ``cached_input_per_million`` when it is set. A model no pattern
matches costs nothing: :meth:`Pricing.price_of` returns None for it, so a report can say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["ModelPrice", "Pricing"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """The price of one model's tokens, per million.

    Attributes:
        input_per_million: prompt tokens.
        output_per_million: answer and thinking tokens.
        cached_input_per_million: prompt tokens served from the provider's cache; None
            prices them as ordinary prompt tokens.
    """

    input_per_million: float
    output_per_million: float
    cached_input_per_million: float | None = None

    def cost(self, prompt: int, output: int, cached: int = 0) -> float:
        """The cost of ``prompt`` tokens (``cached`` of them from the cache) and ``output``."""
        cached_price = self.cached_input_per_million
        if cached_price is None:
            cached_price = self.input_per_million
        fresh = max(prompt - cached, 0)
        total = (
            fresh * self.input_per_million
            + cached * cached_price
            + output * self.output_per_million
        )
        return total / 1_000_000


class Pricing:
    """Prices by model name: ``{regex: ModelPrice}``, the first full match wins.

    Args:
        prices: model-name patterns (``re`` syntax, matched against the whole name) and
            their prices, in the order they are tried.
    """

    __slots__ = ("_found", "_patterns")

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._patterns = [(re.compile(pattern), price) for pattern, price in prices.items()]
        self._found: dict[str, ModelPrice | None] = {}

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when no pattern matches it."""
        try:
            return self._found[model]
        except KeyError:
            pass
        found = next((p for pattern, p in self._patterns if pattern.fullmatch(model)), None)
        self._found[model] = found
        return found

    def cost(self, model: str, usage: types.GenerateContentResponseUsageMetadata | None) -> float:
        """The cost of one response's ``usage`` by ``model`` (0.0 when unpriced or None)."""
        price = self.price_of(model)
        if price is None or usage is None:
            return 0.0
        return price.cost(
            usage.prompt_token_count or 0,
            (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0),
            usage.cached_content_token_count or 0,
        )

    def __repr__(self) -> str:
        return f"Pricing({{{', '.join(repr(p.pattern) for p, _ in self._patterns)}}})"
