"""What an invocation keeps track of: open calls; and the storage of input blobs."""

from __future__ import annotations

from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.rx._engine import sync

__all__ = ["OpenCalls", "save_input_blobs"]


class OpenCalls:
    """Stored function calls that have no stored response yet (long-running ones excluded).

    When an invocation stops early, each gets a function response ``{"error": reason}`` so
    the next model request never carries a call without an answer.

    Attributes:
        by_id: each open call's (name, author, branch), by call id.
        last_author: the agent in charge, which authors the stop record: the agent the
            invocation started with, then the author of each stored agent event, or the
            agent it transferred to (so a stop right after a transfer keeps the
            conversation with the new agent).
    """

    __slots__ = ("by_id", "last_author")

    def __init__(self) -> None:
        self.by_id: dict[str, tuple[str, str, str | None]] = {}
        self.last_author: str | None = None

    def track(self, event: Event) -> None:
        """Takes note of a stored event's calls and responses."""
        if event.author != "user":
            self.last_author = event.actions.transfer_to_agent or event.author
        content = event.content
        if content is None or not content.parts:
            return
        long_running = event.long_running_tool_ids or ()
        for part in content.parts:
            call = part.function_call
            if call is not None and call.id and call.id not in long_running:
                self.by_id[call.id] = (call.name or "", event.author, event.branch)
            response = part.function_response
            if response is not None and response.id:
                self.by_id.pop(response.id, None)

    def answers(self, invocation_id: str, reason: str) -> list[Event]:
        """One function-response event per (author, branch) for the calls still open."""
        grouped: dict[tuple[str, str | None], list[types.Part]] = {}
        for call_id, (name, author, branch) in self.by_id.items():
            grouped.setdefault((author, branch), []).append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call_id, name=name, response={"error": reason}
                    )
                )
            )
        return [
            Event(
                author=author,
                branch=branch,
                invocation_id=invocation_id,
                content=types.Content(role="user", parts=parts),
            )
            for (author, branch), parts in grouped.items()
        ]

    def stop_records(
        self,
        invocation_id: str,
        reason: str,
        code: str | None,
        default_author: str,
        metadata: dict[str, Any] | None = None,
    ) -> list[Event]:
        """What a stopped invocation stores: answers to its open calls, then (with a
        ``code`` such as CANCELLED, TIMEOUT or BUDGET_EXCEEDED) a final event saying where
        it stopped, carrying ``metadata`` as its ``custom_metadata``."""
        events = self.answers(invocation_id, reason)
        if code is not None:
            events.append(
                Event(
                    author=self.last_author or default_author,
                    invocation_id=invocation_id,
                    error_code=code,
                    error_message=f"invocation {reason}",
                    custom_metadata=metadata,
                    turn_complete=True,
                )
            )
        return events


def save_input_blobs(
    service: BaseArtifactService | None, ctx: InvocationContext, content: types.Content
) -> Observable[types.Content]:
    """Stores each inline blob of the user message as ``artifact_<invocation>_<index>``.

    Emits a copy of the message whose blobs are replaced by a text placeholder; the
    caller's message is never modified.
    """
    if service is None:
        return rx.throw(
            ConfigurationError(
                "save_input_blobs_as_artifacts needs an artifact_service on the Runner"
            )
        )
    parts = list(content.parts or [])
    saves: list[Observable[Any]] = []
    for index, part in enumerate(parts):
        if part.inline_data is None:
            continue
        name = f"artifact_{ctx.invocation_id}_{index}"
        saves.append(
            service.save_artifact(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                session_id=ctx.session.id,
                filename=name,
                artifact=part,
            )
        )
        parts[index] = types.Part(text=f"Uploaded file: {name}. It has been saved to the artifacts")
    if not saves:
        return sync.just(content)
    copy = content.model_copy(update={"parts": parts})
    return rx.concat(*saves).pipe(ops.ignore_elements(), ops.concat(sync.just(copy)))
