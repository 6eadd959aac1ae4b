"""A remote task's updates, read into the events of the agent that called it.

Marble diagram of one streamed remote turn (``T`` the task, ``w`` working status updates,
``c`` artifact chunks, ``A`` the last artifact chunk, ``✓`` the completed status)::

    remote:  T--w--c--c--w--A--✓|
    events:  ------p--p--p-----F|      p: partial events, F: the one stored event

``F`` holds the answer (the last artifact, else the final status message, else the last
agent message) and, in ``custom_metadata``, the remote task and context ids
(``a2a:task_id``, ``a2a:context_id``, as google-adk records them), so the conversation's
next turn continues the same remote context. A task that ends failed, rejected or
cancelled raises :class:`~adk_rx.errors.RemoteTaskFailedError` with what the remote said.
"""

from __future__ import annotations

from typing import Any

from a2a.types import Message, Part, Role, StreamResponse, TaskState
from google.genai import types

from adk_rx.a2a.keys import CONTEXT_ID, TASK_ID
from adk_rx.a2a.parts import from_a2a_part
from adk_rx.context import InvocationContext
from adk_rx.errors import RemoteAgentError, RemoteTaskFailedError
from adk_rx.events import Event

__all__ = ["Replies"]

_FAILED = {
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_CANCELED: "cancelled",
}
_ENDED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
        *_FAILED,
    }
)


def _text(parts: list[Part]) -> str:
    return " ".join(p.text for p in parts if p.WhichOneof("content") == "text").strip()


class Replies:
    """Reads one remote turn's stream for the agent ``agent`` running in ``ctx``."""

    def __init__(self, agent: str, ctx: InvocationContext) -> None:
        self.agent = agent
        self.ctx = ctx
        self.task_id = ""
        self.context_id = ""
        self.state: TaskState = TaskState.TASK_STATE_UNSPECIFIED
        self._answer: list[Part] = []
        self._status: list[Part] = []
        self._message: Message | None = None

    @property
    def ended(self) -> bool:
        """The remote task reached a final or interrupted state (or answered a message)."""
        return self._message is not None or self.state in _ENDED

    def _event(self, parts: list[Part], **fields: Any) -> Event:
        genai = [p for p in (from_a2a_part(part) for part in parts) if p is not None]
        content = types.Content(role="model", parts=genai) if genai else None
        return Event(
            author=self.agent,
            invocation_id=self.ctx.invocation_id,
            branch=self.ctx.branch,
            content=content,
            **fields,
        )

    def _ids(self, task_id: str, context_id: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id

    def read(self, item: StreamResponse) -> Event | None:
        """The partial event an update shows now, if any."""
        kind = item.WhichOneof("payload")
        if kind == "message":
            self._message = item.message
            self._ids(item.message.task_id, item.message.context_id)
            return None
        if kind == "task":
            task = item.task
            self._ids(task.id, task.context_id)
            self.state = task.status.state
            self._status = list(task.status.message.parts)
            if task.artifacts:
                self._answer = [p for artifact in task.artifacts for p in artifact.parts]
            elif not self._status:
                agents = [m for m in task.history if m.role == Role.ROLE_AGENT]
                self._status = list(agents[-1].parts) if agents else []
            return None
        if kind == "status_update":
            update = item.status_update
            self._ids(update.task_id, update.context_id)
            self.state = update.status.state
            parts = list(update.status.message.parts)
            if parts:
                self._status = parts
            if parts and self.state == TaskState.TASK_STATE_WORKING:
                return self._event(parts, partial=True)
            return None
        if kind == "artifact_update":
            update = item.artifact_update
            self._ids(update.task_id, update.context_id)
            parts = list(update.artifact.parts)
            if update.last_chunk:
                self._answer = [*self._answer, *parts] if update.append else parts
                return None
            return self._event(parts, partial=True) if parts else None
        return None

    def final(self) -> Event:
        """The stored event of the turn; raises when the remote task did not answer."""
        if self.state in _FAILED:
            said = _text(self._status) or "no reason given"
            raise RemoteTaskFailedError(
                f"the task of remote agent {self.agent!r} ended {_FAILED[self.state]}: {said}",
                agent=self.agent,
                state=_FAILED[self.state],
            )
        if not self.ended:
            raise RemoteAgentError(
                f"the stream of remote agent {self.agent!r} ended before its task did "
                f"(last state {TaskState.Name(self.state)})",
                agent=self.agent,
            )
        if self._message is not None:
            parts = list(self._message.parts)
        else:
            parts = self._answer or self._status
        metadata = {TASK_ID: self.task_id, CONTEXT_ID: self.context_id}
        if not self.task_id:
            del metadata[TASK_ID]
        return self._event(parts, custom_metadata=metadata)
