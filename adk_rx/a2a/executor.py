"""The a2a-sdk executor that answers each task with one adk_rx run.

The SDK's request handler keeps the tasks (who owns which, their stored state) and calls
:meth:`A2aAgentExecutor.execute` for each message; the executor starts the run through a
:class:`~adk_rx.a2a.runs.RunStarter`, then puts the run's events on the task's queue as
``task_events.py`` shapes them. ``tasks/cancel`` calls :meth:`A2aAgentExecutor.cancel`,
which disposes the run and waits (bounded) until its session has stored ``CANCELLED``;
only then does the task end ``canceled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import TaskState
from google.genai import types

from adk_rx.a2a.keys import adk_key
from adk_rx.a2a.parts import from_a2a_part, struct_dict
from adk_rx.a2a.runs import RunRequest, RunStarter, StartedRun
from adk_rx.a2a.task_events import TaskEvents, submitted_task

__all__ = ["A2aAgentExecutor", "user_of"]

_log = logging.getLogger("adk_rx.a2a")
_STREAMING_METHODS = frozenset({"SendStreamingMessage", "message/stream"})
_INTERRUPTED = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)


def user_of(context: RequestContext) -> str:
    """The session user a task runs as: the authenticated caller, else one per context.

    As google-adk does: a name the caller claims without the server checking it is not
    used, so unauthenticated callers never share a user's sessions and state.
    """
    user = context.call_context.user
    if user.is_authenticated and user.user_name:
        return user.user_name
    return f"A2A_USER_{context.context_id}"


@dataclass
class _Running:
    run: StartedRun
    cancelled: bool = False


class A2aAgentExecutor(AgentExecutor):
    """Answers A2A tasks with runs of one app.

    Args:
        runs: starts the app's runs.
        cancel_timeout: seconds ``tasks/cancel`` waits for the run to store where it stopped.
    """

    def __init__(self, runs: RunStarter, *, cancel_timeout: float = 5.0) -> None:
        self.runs = runs
        self.cancel_timeout = cancel_timeout
        self._running: dict[str, _Running] = {}

    def _request(self, context: RequestContext, content: types.Content) -> RunRequest:
        call = context.call_context
        task = context.current_task
        invocation_id = None
        if self.runs.is_resumable and task is not None and task.status.state in _INTERRUPTED:
            # The answer to a pending long-running call continues the paused invocation.
            found = struct_dict(task.metadata).get(adk_key("invocation_id"))
            invocation_id = found if isinstance(found, str) and found else None
        return RunRequest(
            user_id=user_of(context),
            session_id=str(context.context_id),
            new_message=content,
            streaming=call.state.get("method") in _STREAMING_METHODS,
            invocation_id=invocation_id,
            headers=dict(call.state.get("headers") or {}),
        )

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Runs the task's message and streams the run onto the task's queue."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(submitted_task(task_id, context_id, context.message))
        request = self._request(context, _content(context))
        shape = TaskEvents(
            task_id,
            context_id,
            {
                adk_key("app_name"): self.runs.app_name,
                adk_key("user_id"): request.user_id,
                adk_key("session_id"): request.session_id,
            },
        )
        if not request.new_message.parts:
            error = ValueError("the message has no part adk_rx can read (text, file or data)")
            await event_queue.enqueue_event(shape.failed(error))
            return
        try:
            run = await self.runs.start(request)
        except Exception as error:  # refused before it ran: busy session, too many runs...
            await event_queue.enqueue_event(shape.failed(error))
            return
        running = _Running(run)
        self._running[task_id] = running
        try:
            await event_queue.enqueue_event(shape.started())
            async for event in run.events():
                for update in shape.of(event):
                    await event_queue.enqueue_event(update)
            if not running.cancelled:
                for update in shape.finished():
                    await event_queue.enqueue_event(update)
        except asyncio.CancelledError:
            running.cancelled = True
            raise
        except Exception as error:
            if not running.cancelled:
                _log.warning("task %s failed: %s: %s", task_id, type(error).__name__, error)
                await event_queue.enqueue_event(shape.failed(error))
        finally:
            self._running.pop(task_id, None)
            if running.cancelled:  # the producer was cancelled: the run must not go on
                with contextlib.suppress(Exception):
                    await asyncio.shield(run.cancel(self.cancel_timeout))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Disposes the task's run, waits until its session stored ``CANCELLED``, then
        ends the task ``canceled``."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        running = self._running.get(task_id)
        if running is not None:
            running.cancelled = True
            await running.run.cancel(self.cancel_timeout)
        await event_queue.enqueue_event(TaskEvents(task_id, context_id, {}).cancelled())


def _content(context: RequestContext) -> types.Content:
    message = context.message
    parts = [p for p in (from_a2a_part(part) for part in (message.parts if message else ())) if p]
    return types.Content(role="user", parts=parts)
