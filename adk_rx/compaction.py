"""Event compaction: old events of a session replaced by a summary.

After an invocation's own events were stored and emitted, the Runner asks
:func:`compact_session` whether the session needs a compaction (see
:class:`~adk_rx.apps.EventsCompactionConfig` for the two triggers). If so, a summarizer turns
the chosen events into one event whose ``actions.compaction`` is an
:class:`~adk_rx.events.EventCompaction` (the time range it covers and the summary); the
Runner stores it (it is not emitted). Model requests then carry the summary in place of the
events of that range (``adk_rx.flows.contents``); state and artifacts are untouched, since
they live in the session, not in the events sent to the model.

A summarizer that fails is logged and skipped: the session stays as it was.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.apps import EventsCompactionConfig
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event, EventActions, EventCompaction
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.rx import sync
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session

__all__ = [
    "BaseEventSummarizer",
    "LlmEventSummarizer",
    "compact_session",
    "default_summarizer",
    "events_to_compact",
]

log = logging.getLogger("adk_rx.compaction")

DEFAULT_PROMPT = (
    "Summarise the conversation below for the assistant that continues it. Keep every fact, "
    "decision, open question, tool result and commitment it will need; drop pleasantries. "
    "Write plain prose.\n\n{conversation_history}"
)


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


def default_summarizer(root: BaseAgent) -> LlmEventSummarizer:
    """An :class:`LlmEventSummarizer` on the root agent's model (else the first LlmAgent's).

    Raises:
        ConfigurationError: no LlmAgent of the tree has a model.
    """
    from adk_rx.agents.llm import LlmAgent

    pending = [root]
    while pending:
        agent = pending.pop(0)
        if isinstance(agent, LlmAgent) and agent.model is not None:
            return LlmEventSummarizer(agent.canonical_model)
        pending.extend(agent.sub_agents)
    raise ConfigurationError(
        "events compaction needs a summarizer: the agent tree has no LlmAgent with a model; "
        "pass EventsCompactionConfig(summarizer=...)"
    )


def _since_last_compaction(events: Sequence[Event]) -> tuple[Event | None, list[Event]]:
    last: Event | None = None
    for event in events:
        if event.actions.compaction is not None and (
            last is None
            or event.actions.compaction.end_timestamp > last.actions.compaction.end_timestamp  # type: ignore[union-attr]
        ):
            last = event
    if last is None:
        return None, [e for e in events if not e.partial]
    end = last.actions.compaction.end_timestamp  # type: ignore[union-attr]
    return last, [e for e in events if e.actions.compaction is None and e.timestamp > end]


def _window(events: Sequence[Event], config: EventsCompactionConfig) -> list[Event] | None:
    assert config.compaction_interval is not None and config.overlap_size is not None
    _, fresh = _since_last_compaction(events)
    new_ids = list(dict.fromkeys(e.invocation_id for e in fresh))
    if len(new_ids) < config.compaction_interval:
        return None
    all_ids = list(dict.fromkeys(e.invocation_id for e in events if e.actions.compaction is None))
    first = all_ids.index(new_ids[0])
    chosen = set(all_ids[max(0, first - config.overlap_size) :]) | set(new_ids)
    return [e for e in events if e.actions.compaction is None and e.invocation_id in chosen]


def _prompt_tokens(events: Sequence[Event]) -> int | None:
    for event in reversed(events):
        usage = event.usage_metadata
        if usage is not None and usage.prompt_token_count is not None:
            return usage.prompt_token_count
    return None


def _tokens(events: Sequence[Event], config: EventsCompactionConfig) -> list[Event] | None:
    assert config.token_threshold is not None and config.event_retention_size is not None
    tokens = _prompt_tokens(events)
    if tokens is None or tokens <= config.token_threshold:
        return None
    previous, fresh = _since_last_compaction(events)
    cut = len(fresh) - config.event_retention_size
    # Never keep a response whose call is summarised away: move the cut before the call.
    while 0 < cut < len(fresh) and fresh[cut].get_function_responses():
        cut -= 1
    if cut <= 0:
        return None
    chosen = fresh[:cut]
    return [previous, *chosen] if previous is not None else chosen


def events_to_compact(
    events: Sequence[Event], config: EventsCompactionConfig
) -> list[Event] | None:
    """The events a compaction should summarise now, or None (no trigger fired).

    The sliding window is checked first, then the token threshold. Events come whole
    invocations at a time for the window; the token trigger keeps the newest
    ``event_retention_size`` events (and rolls the previous summary into the new one).
    """
    stored = [e for e in events if not e.partial]
    if config.has_window:
        chosen = _window(stored, config)
        if chosen:
            return chosen
    if config.has_token_trigger:
        return _tokens(stored, config)
    return None


def compact_session(
    session: Session,
    service: BaseSessionService,
    config: EventsCompactionConfig,
    summarizer: BaseEventSummarizer,
) -> Observable[Event]:
    """Stores a compaction event when a trigger fires; emits it (or nothing).

    Never errors: a failing summarizer or store is logged on ``adk_rx.compaction`` and the
    session is left as it was.
    """

    def run(_: Any) -> Observable[Event]:
        chosen = events_to_compact(session.events, config)
        if not chosen:
            return sync.empty()
        return summarizer.summarize_events(chosen).pipe(
            ops.take(1), ops.flat_map(lambda event: service.append_event(session, event))
        )

    def skip(error: Exception, _: Any) -> Observable[Event]:
        log.warning("compaction of session %s skipped: %r", session.id, error, exc_info=error)
        return sync.empty()

    return rx.defer(run).pipe(ops.catch(skip))
