"""Models: the BaseLlm seam, requests and responses, the registry, and providers.

Providers are imported on first use (``from adk_rx.models import GeminiLlm``), so importing
adk_rx does not load provider SDKs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.registry import LlmRegistry

if TYPE_CHECKING:
    from adk_rx.models.anthropic_llm import AnthropicLlm
    from adk_rx.models.circuit_breaker import CircuitBreaker, CircuitBreakerLlm
    from adk_rx.models.concurrency_limit import ConcurrencyLimitedLlm
    from adk_rx.models.gemini import GeminiLlm
    from adk_rx.models.lite_llm import LiteLlm
    from adk_rx.models.openai_compat import OpenAiCompatibleLlm
    from adk_rx.models.rate_limit import RateLimitedLlm, RateLimiter
    from adk_rx.models.recording import RecordingLlm, ReplayLlm
    from adk_rx.models.resilience import ResilientLlm, RetryNotice, RetryPolicy

__all__ = [
    "AnthropicLlm",
    "BaseLlm",
    "CircuitBreaker",
    "CircuitBreakerLlm",
    "ConcurrencyLimitedLlm",
    "GeminiLlm",
    "LiteLlm",
    "LlmRegistry",
    "LlmRequest",
    "LlmResponse",
    "OpenAiCompatibleLlm",
    "RateLimitedLlm",
    "RateLimiter",
    "RecordingLlm",
    "ReplayLlm",
    "ResilientLlm",
    "RetryNotice",
    "RetryPolicy",
]

_LAZY = {
    "AnthropicLlm": "adk_rx.models.anthropic_llm",
    "CircuitBreaker": "adk_rx.models.circuit_breaker",
    "CircuitBreakerLlm": "adk_rx.models.circuit_breaker",
    "ConcurrencyLimitedLlm": "adk_rx.models.concurrency_limit",
    "RateLimitedLlm": "adk_rx.models.rate_limit",
    "RateLimiter": "adk_rx.models.rate_limit",
    "GeminiLlm": "adk_rx.models.gemini",
    "LiteLlm": "adk_rx.models.lite_llm",
    "OpenAiCompatibleLlm": "adk_rx.models.openai_compat",
    "RecordingLlm": "adk_rx.models.recording",
    "ReplayLlm": "adk_rx.models.recording",
    "ResilientLlm": "adk_rx.models.resilience",
    "RetryNotice": "adk_rx.models.resilience",
    "RetryPolicy": "adk_rx.models.resilience",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adk_rx.models' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
