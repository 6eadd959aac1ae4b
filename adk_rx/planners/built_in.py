"""BuiltInPlanner: the model plans with its own thinking (google-adk's ``BuiltInPlanner``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from adk_rx.planners.base import BasePlanner

if TYPE_CHECKING:
    from google.genai import types

    from adk_rx.context import CallbackContext, ReadonlyContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["BuiltInPlanner"]

_log = logging.getLogger("adk_rx.planners")


class BuiltInPlanner(BasePlanner):
    """Sets the model's thinking config on every request; adds no instruction.

    Args:
        thinking_config: e.g. ``types.ThinkingConfig(include_thoughts=True,
            thinking_budget=1024)``; it replaces one in ``generate_content_config``. A model
            that cannot think refuses it.
    """

    def __init__(self, *, thinking_config: types.ThinkingConfig) -> None:
        self.thinking_config = thinking_config

    def apply_thinking_config(self, llm_request: LlmRequest) -> None:
        """Puts the thinking config on ``llm_request``."""
        if llm_request.config.thinking_config is not None:
            _log.debug("BuiltInPlanner replaces the thinking_config of generate_content_config")
        llm_request.config.thinking_config = self.thinking_config

    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str | None:
        """None: the model's thinking needs no instruction."""
        return None

    def process_planning_response(
        self, callback_context: CallbackContext, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        """None: the model marks its thoughts itself."""
        return None
