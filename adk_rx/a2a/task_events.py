"""A run's events as the A2A events of its task, as google-adk 2.13's executor sends them.

One run, as its task's stream (``message/stream``) shows it::

    Task(submitted, history=[the message])               the task exists
    status-update(working, metadata adk_app_name...)     the run started
    artifact-update(A, chunk, append, last_chunk=false)  each streamed (partial) chunk
    status-update(working, message=event)                each stored event with content
    artifact-update(A, final parts, last_chunk=true)     the last stored content, whole
    status-update(completed)                             the end

``A`` is one artifact id per run, so the whole answer replaces its chunks in the stored task
(``tasks/get`` shows it once). A run whose last event asks for input (a pending long-running
call) ends ``input-required`` instead, one that stored an error ends ``failed`` with its
message, and one that raised ends ``failed`` with the error. ``message/send`` returns the
task as that stream leaves it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.genai import types

from adk_rx.a2a.keys import IS_LONG_RUNNING, adk_key
from adk_rx.a2a.parts import struct, to_a2a_part
from adk_rx.events import Event

__all__ = ["TaskEvents", "submitted_task"]

_Update = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
_AUTH_CALL = "adk_request_credential"


def submitted_task(task_id: str, context_id: str, message: Message | None) -> Task:
    """The first event of a new task (a2a-sdk 1.x requires a Task first)."""
    task = Task(id=task_id, context_id=context_id)
    task.status.state = TaskState.TASK_STATE_SUBMITTED
    task.status.timestamp.GetCurrentTime()
    if message is not None:
        task.history.append(message)
    return task


def _message(content: types.Content | None, role: Role) -> Message | None:
    parts = [
        p for p in (to_a2a_part(part) for part in (content.parts if content else None) or []) if p
    ]
    if not parts:
        return None
    return Message(message_id=uuid.uuid4().hex, role=role, parts=parts)


def _metadata_value(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, by_alias=True)
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


class TaskEvents:
    """Turns one run's events into its task's A2A events (stateful: it tracks the answer).

    Args:
        task_id, context_id: the task's ids.
        base_metadata: what every update carries (``adk_app_name``, ``adk_user_id``,
            ``adk_session_id``).
    """

    def __init__(self, task_id: str, context_id: str, base_metadata: dict[str, Any]) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.base = dict(base_metadata)
        self.artifact_id = uuid.uuid4().hex
        self._chunks = 0
        self._last: Message | None = None
        self._last_event: Event | None = None
        self._state: TaskState = TaskState.TASK_STATE_WORKING

    def _status(
        self, state: TaskState, message: Message | None, metadata: dict[str, Any]
    ) -> TaskStatusUpdateEvent:
        update = TaskStatusUpdateEvent(task_id=self.task_id, context_id=self.context_id)
        update.status.CopyFrom(TaskStatus(state=state))
        update.status.timestamp.GetCurrentTime()
        if message is not None:
            message.task_id, message.context_id = self.task_id, self.context_id
            update.status.message.CopyFrom(message)
        update.metadata.CopyFrom(struct(metadata))
        return update

    def started(self) -> TaskStatusUpdateEvent:
        """The run started: working, with the session's names."""
        return self._status(TaskState.TASK_STATE_WORKING, None, self.base)

    def _event_metadata(self, event: Event) -> dict[str, Any]:
        meta = {**self.base, adk_key("invocation_id"): event.invocation_id}
        meta[adk_key("author")] = event.author
        meta[adk_key("event_id")] = event.id
        for name in ("branch", "usage_metadata", "error_code", "custom_metadata"):
            value = getattr(event, name)
            if value is not None:
                meta[adk_key(name)] = _metadata_value(value)
        return meta

    def of(self, event: Event) -> list[_Update]:
        """The A2A events for one event of the run."""
        if event.partial:
            chunk = _message(event.content, Role.ROLE_AGENT)
            if chunk is None:
                return []
            self._chunks += 1
            return [self._artifact(chunk.parts, append=self._chunks > 1, last=False)]
        self._last_event = event
        updates: list[_Update] = []
        if event.error_code and event.error_code not in ("CANCELLED",):
            self._state = TaskState.TASK_STATE_FAILED
            text = event.error_message or f"the run stopped: {event.error_code}"
            self._last = Message(
                message_id=uuid.uuid4().hex, role=Role.ROLE_AGENT, parts=[Part(text=text)]
            )
        role = Role.ROLE_USER if event.author == "user" else Role.ROLE_AGENT
        message = _message(event.content, role)
        if message is not None:
            if self._state == TaskState.TASK_STATE_WORKING:
                self._last = message  # marked below: the pending call is what the task waits on
            self._mark_long_running(message, event)
            updates.append(
                self._status(TaskState.TASK_STATE_WORKING, message, self._event_metadata(event))
            )
        return updates

    def _mark_long_running(self, message: Message, event: Event) -> None:
        pending = event.long_running_tool_ids or frozenset()
        for part in message.parts:
            call = part.data.struct_value.fields if part.HasField("data") else None
            if call is None or "id" not in call or call["id"].string_value not in pending:
                continue
            part.metadata.update({IS_LONG_RUNNING: True})
            if self._state == TaskState.TASK_STATE_WORKING:
                name = call["name"].string_value if "name" in call else ""
                is_auth = name == _AUTH_CALL
                self._state = (
                    TaskState.TASK_STATE_AUTH_REQUIRED
                    if is_auth
                    else TaskState.TASK_STATE_INPUT_REQUIRED
                )

    def _artifact(self, parts: Any, *, append: bool, last: bool) -> TaskArtifactUpdateEvent:
        update = TaskArtifactUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, append=append, last_chunk=last
        )
        update.artifact.CopyFrom(Artifact(artifact_id=self.artifact_id, parts=parts))
        update.metadata.CopyFrom(struct(self.base))
        return update

    def _final_metadata(self) -> dict[str, Any]:
        meta = dict(self.base)
        if self._last_event is not None:
            meta[adk_key("invocation_id")] = self._last_event.invocation_id
            meta[adk_key("author")] = self._last_event.author
            meta[adk_key("event_id")] = self._last_event.id
        return meta

    def finished(self) -> list[_Update]:
        """The run ended: the answer as the task's artifact, then the final state."""
        meta = self._final_metadata()
        if self._state == TaskState.TASK_STATE_WORKING and self._last is not None:
            return [
                self._artifact(self._last.parts, append=False, last=True),
                self._status(TaskState.TASK_STATE_COMPLETED, None, meta),
            ]
        state = self._state
        if state == TaskState.TASK_STATE_WORKING:
            state = TaskState.TASK_STATE_COMPLETED
        return [self._status(state, self._last, meta)]

    def failed(self, error: BaseException) -> TaskStatusUpdateEvent:
        """The run raised: the task fails with the error's message."""
        text = f"{type(error).__name__}: {error}"
        message = Message(
            message_id=uuid.uuid4().hex, role=Role.ROLE_AGENT, parts=[Part(text=text)]
        )
        return self._status(TaskState.TASK_STATE_FAILED, message, self._final_metadata())

    def cancelled(self) -> TaskStatusUpdateEvent:
        """The task was cancelled (``tasks/cancel``)."""
        return self._status(TaskState.TASK_STATE_CANCELED, None, self._final_metadata())
