"""``GlobalInstructionPlugin``: one instruction before every agent's own (google-adk's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import CallbackContext
from adk_rx.instructions import resolve_instruction
from adk_rx.models.llm_request import LlmRequest
from adk_rx.plugins.base import BasePlugin

__all__ = ["GlobalInstructionPlugin"]


class GlobalInstructionPlugin(BasePlugin):
    """Puts ``global_instruction`` first in the system instruction of every model call.

    A string is templated from the session state like an agent's instruction (``{key}``,
    ``{key?}``, ``{artifact.name}``); a callable ``(ReadonlyContext) -> str`` (or awaitable
    / Observable of str) is used as returned. An empty result leaves the request alone.

    Args:
        global_instruction: the instruction, or its provider.
        name: the plugin's name.
    """

    def __init__(
        self,
        global_instruction: str | Callable[..., Any] = "",
        name: str = "global_instruction",
    ) -> None:
        super().__init__(name)
        self.global_instruction = global_instruction

    def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> Observable[Any] | None:
        """Prepends the resolved instruction to the request's system instruction."""
        if not self.global_instruction:
            return None
        resolved = resolve_instruction(self.global_instruction, callback_context.invocation_context)

        def prepend(text: str) -> None:
            if text:
                llm_request.config.system_instruction = _prepended(
                    text, llm_request.config.system_instruction
                )

        return resolved.pipe(ops.do_action(prepend), ops.ignore_elements())


def _prepended(prefix: str, existing: Any) -> Any:
    """``prefix`` before ``existing``, keeping the shape of ``existing`` (google-adk's rule)."""
    if not existing:
        return prefix
    if isinstance(existing, str):
        return f"{prefix}\n\n{existing}"
    if isinstance(existing, types.Content):
        return existing.model_copy(
            update={"parts": [types.Part(text=prefix), *(existing.parts or [])]}
        )
    parts = list(existing) if isinstance(existing, list) else [existing]
    return [prefix, *parts]
