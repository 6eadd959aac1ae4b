"""BasePlanner: what a planner adds to a request and how it reads a response."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from google.genai import types

    from adk_rx.context import CallbackContext, ReadonlyContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["BasePlanner"]


class BasePlanner(ABC):
    """A planner of an LlmAgent (google-adk's ``BasePlanner``).

    Before each model call the flow appends :meth:`build_planning_instruction` to the system
    instruction; after it, :meth:`process_planning_response` may replace the parts of each
    response (streamed chunks included) before they become an event.
    """

    @abstractmethod
    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str | None:
        """The planning instruction for this request, or None for none.

        Args:
            readonly_context: the invocation, read-only.
            llm_request: the request being built (read it, do not edit it).
        """

    @abstractmethod
    def process_planning_response(
        self, callback_context: CallbackContext, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        """The parts to keep of a response, or None to keep them as they are.

        Args:
            callback_context: the invocation.
            response_parts: the response's parts (do not edit them).
        """
