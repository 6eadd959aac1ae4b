"""Opening a turn: the invocation's context, and the hooks that may change the user message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.run_config import RunConfig
from adk_rx.runner.records import save_input_blobs
from adk_rx.rx._engine import sync
from adk_rx.rx.schedulers import timer_scheduler
from adk_rx.sessions.session import Session

if TYPE_CHECKING:
    from adk_rx.runner.runner import Runner

__all__ = ["invocation_context", "user_message_hooks"]


def invocation_context(
    runner: Runner, session: Session, message: types.Content | None, run_config: RunConfig
) -> InvocationContext:
    """The context of a new invocation of ``runner`` on ``session``, rooted at its agent."""
    return InvocationContext(
        session_service=runner.session_service,
        session=session,
        agent=runner.agent,
        user_content=message,
        run_config=run_config,
        artifact_service=runner.artifact_service,
        memory_service=runner.memory_service,
        plugin_manager=runner.plugin_manager,
        io_scheduler=runner.io_scheduler,
        # Never None: time operators default to a scheduler that starts a thread per timer.
        timer_scheduler=runner.timer_scheduler or timer_scheduler(),
        is_resumable=runner.app.is_resumable,
    )


def user_message_hooks(
    runner: Runner, ctx: InvocationContext, message: types.Content, run_config: RunConfig
) -> Observable[types.Content] | None:
    """The user message as the plugins' ``on_user_message_callback`` replace it and with its
    blobs saved as artifacts (``save_input_blobs_as_artifacts``); None when neither applies."""
    plugins = runner.plugin_manager
    has_hook = plugins.has("on_user_message_callback")
    if not has_hook and not run_config.save_input_blobs_as_artifacts:
        return None
    found = sync.just(message)
    if has_hook:
        found = plugins.first(
            "on_user_message_callback", invocation_context=ctx, user_message=message
        ).pipe(ops.default_if_empty(message))
    if run_config.save_input_blobs_as_artifacts:
        found = found.pipe(
            ops.flat_map(lambda m: save_input_blobs(runner.artifact_service, ctx, m))
        )
    return found
