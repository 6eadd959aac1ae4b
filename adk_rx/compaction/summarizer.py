"""Summarizers: the events chosen for a compaction become one event carrying their summary.

:class:`BaseEventSummarizer` is the seam (``summarize_events(events) -> Maybe[Event]``);
:class:`LlmEventSummarizer` asks a model, with the events written one line each, and
:func:`compaction_event` builds the event it emits (``actions.compaction`` holds the time range
and the summary; it is authored ``"user"`` and never emitted to a subscriber).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError
from adk_rx.events import Event, EventActions, EventCompaction
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.rx._engine import sync

__all__ = ["DEFAULT_PROMPT", "BaseEventSummarizer", "LlmEventSummarizer", "compaction_event"]

DEFAULT_PROMPT = (
    "Summarise the conversation below for the assistant that continues it. Keep every fact, "
    "decision, open question, tool result and commitment it will need; drop pleasantries. "
    "Write plain prose.\n\n{conversation_history}"
)
"""The prompt :class:`LlmEventSummarizer` sends unless given another one."""


class BaseEventSummarizer:
    """Summarises events; a subclass implements :meth:`summarize_events`."""

    def summarize_events(self, events: Sequence[Event]) -> Observable[Event]:
        """Emits one compaction event covering ``events``, or nothing (a Maybe)."""
        raise NotImplementedError(f"{type(self).__name__} must implement summarize_events")


def _line(event: Event) -> list[str]:
    if event.actions.compaction is not None:
        text = "".join(p.text or "" for p in event.actions.compaction.compacted_content.parts or [])
        return [f"summary of earlier conversation: {text}"]
    role = event.author
    out: list[str] = []
    for part in event.content.parts or [] if event.content is not None else []:
        if part.text and not part.thought:
            out.append(f"{role}: {part.text}")
        elif part.function_call is not None:
            args = json.dumps(part.function_call.args or {}, default=str)
            out.append(f"{role}: [FUNCTION_CALL: {part.function_call.name}({args})]")
        elif part.function_response is not None:
            body = json.dumps(part.function_response.response or {}, default=str)
            out.append(f"{role}: [FUNCTION_RESPONSE: {part.function_response.name} -> {body}]")
    return out


def compaction_event(events: Sequence[Event], summary: types.Content) -> Event:
    """The event that stores ``summary`` in place of ``events`` (authored ``"user"``)."""
    first = events[0].actions.compaction
    start = first.start_timestamp if first is not None else events[0].timestamp
    return Event(
        author="user",
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=start,
                end_timestamp=events[-1].timestamp,
                compacted_content=summary.model_copy(update={"role": "model"}),
            )
        ),
    )


class LlmEventSummarizer(BaseEventSummarizer):
    """Asks a model for the summary.

    Args:
        llm: the model to ask.
        prompt_template: the prompt; ``{conversation_history}`` is replaced by the events,
            one line each (``author: text``, ``[FUNCTION_CALL: ...]``, ``[FUNCTION_RESPONSE:
            ...]``).
    """

    def __init__(self, llm: BaseLlm, prompt_template: str = DEFAULT_PROMPT) -> None:
        if "{conversation_history}" not in prompt_template:
            raise ConfigurationError("prompt_template must contain {conversation_history}")
        self.llm = llm
        self.prompt_template = prompt_template

    def summarize_events(self, events: Sequence[Event]) -> Observable[Event]:
        """Emits the compaction event, or nothing when there is nothing to summarise."""
        if not events:
            return sync.empty()
        lines = [line for event in events for line in _line(event)]
        prompt = self.prompt_template.replace("{conversation_history}", "\n".join(lines))
        request = LlmRequest(
            model=self.llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        )

        def to_event(responses: list[Any]) -> Observable[Event]:
            final = [r for r in responses if not r.partial and r.content is not None]
            if not final or not final[-1].content.parts:
                return sync.empty()
            return sync.just(compaction_event(events, final[-1].content))

        return rx.defer(lambda _: self.llm.generate_content(request, stream=False)).pipe(
            ops.to_list(), ops.flat_map(to_event)
        )
