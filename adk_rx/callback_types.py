"""The types of the callbacks an agent takes (API.md's callback table, as type aliases).

Each callback may return its result directly, as an awaitable (``async def``), or as an
Observable; ``None`` lets the next callback (and then the step itself) run. An agent takes
one callback or a sequence of them for each hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias, TypeVar

from google.genai import types
from reactivex import Observable

from adk_rx.context import CallbackContext, ToolContext
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.tools.base import BaseTool

__all__ = [
    "AfterAgentCallback",
    "AfterModelCallback",
    "AfterToolCallback",
    "BeforeAgentCallback",
    "BeforeModelCallback",
    "BeforeToolCallback",
    "CallbackResult",
    "Callbacks",
    "OnModelErrorCallback",
    "OnToolErrorCallback",
]

T = TypeVar("T")
C = TypeVar("C")

CallbackResult: TypeAlias = T | Awaitable[T | None] | Observable[T] | None
"""What a callback returns: a value, None (go on), an awaitable or an Observable of one."""

Callbacks: TypeAlias = C | Sequence[C] | None
"""One callback, a sequence of them (run in order), or None."""

BeforeAgentCallback: TypeAlias = Callable[[CallbackContext], CallbackResult[types.Content]]
AfterAgentCallback: TypeAlias = Callable[[CallbackContext], CallbackResult[types.Content]]
BeforeModelCallback: TypeAlias = Callable[
    [CallbackContext, LlmRequest], CallbackResult[LlmResponse]
]
AfterModelCallback: TypeAlias = Callable[
    [CallbackContext, LlmResponse], CallbackResult[LlmResponse]
]
OnModelErrorCallback: TypeAlias = Callable[
    [CallbackContext, LlmRequest, Exception], CallbackResult[LlmResponse]
]
BeforeToolCallback: TypeAlias = Callable[
    [BaseTool, dict[str, Any], ToolContext], CallbackResult[dict[str, Any]]
]
AfterToolCallback: TypeAlias = Callable[
    [BaseTool, dict[str, Any], ToolContext, dict[str, Any]], CallbackResult[dict[str, Any]]
]
OnToolErrorCallback: TypeAlias = Callable[
    [BaseTool, dict[str, Any], ToolContext, Exception], CallbackResult[dict[str, Any]]
]
