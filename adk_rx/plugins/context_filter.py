"""``ContextFilterPlugin``: keep the last invocations of what the model is sent (google-adk's)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from google.genai import types

from adk_rx.context import CallbackContext
from adk_rx.errors import ConfigurationError
from adk_rx.models.llm_request import LlmRequest
from adk_rx.plugins.base import BasePlugin

__all__ = ["ContextFilterPlugin"]

log = logging.getLogger("adk_rx.plugins")


class ContextFilterPlugin(BasePlugin):
    """Cuts each model request's contents down before the model sees them.

    An invocation starts with one or more consecutive user messages (tool results are not
    user messages). Once the contents hold ``num_invocations_to_keep + remove_amount``
    invocations, only the last ``num_invocations_to_keep`` stay, the cut moved earlier when
    it would keep a tool result without its call. ``custom_filter`` then gets the contents
    and returns the ones to send. A filter that raises is logged and the request is left as
    it was. The stored session is never changed.

    Args:
        num_invocations_to_keep: how many of the last invocations to keep (None: all).
        custom_filter: contents -> contents, applied after the cut.
        name: the plugin's name.
        remove_amount: how many invocations over the limit trigger a cut (at least 1).
    """

    def __init__(
        self,
        num_invocations_to_keep: int | None = None,
        custom_filter: Callable[[list[types.Content]], list[types.Content]] | None = None,
        name: str = "context_filter_plugin",
        remove_amount: int = 1,
    ) -> None:
        if remove_amount < 1:
            raise ConfigurationError("remove_amount must be at least 1")
        super().__init__(name)
        self._keep = num_invocations_to_keep
        self._custom_filter = custom_filter
        self._remove_amount = remove_amount

    def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> None:
        """Replaces ``llm_request.contents`` with the filtered contents."""
        try:
            contents = llm_request.contents
            if self._keep is not None and self._keep > 0:
                starts = _invocation_starts(contents)
                if len(starts) >= self._keep + self._remove_amount:
                    split = _keep_pairs(contents, starts[-self._keep])
                    contents = contents[split:]
            if self._custom_filter is not None:
                contents = self._custom_filter(contents)
            llm_request.contents = contents
        except Exception:
            log.exception("ContextFilterPlugin could not filter the request")


def _is_user_message(content: types.Content) -> bool:
    parts = content.parts
    responds = parts is not None and any(p.function_response is not None for p in parts)
    return content.role == "user" and not responds


def _invocation_starts(contents: Sequence[types.Content]) -> list[int]:
    starts: list[int] = []
    previous = False
    for index, content in enumerate(contents):
        current = _is_user_message(content)
        if current and not previous:
            starts.append(index)
        previous = current
    return starts


def _keep_pairs(contents: Sequence[types.Content], split: int) -> int:
    """``split`` moved left until no kept function response lacks its call."""
    needed: set[str] = set()
    for index in range(len(contents) - 1, -1, -1):
        for part in reversed(contents[index].parts or []):
            if part.function_response is not None and part.function_response.id:
                needed.add(part.function_response.id)
            if part.function_call is not None and part.function_call.id:
                needed.discard(part.function_call.id)
        if index <= split and not needed:
            return index
    return 0
