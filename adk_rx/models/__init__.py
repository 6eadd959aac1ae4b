"""Models: the BaseLlm seam, requests and responses, the registry, and providers."""

from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.registry import LlmRegistry

__all__ = ["BaseLlm", "LlmRegistry", "LlmRequest", "LlmResponse"]
