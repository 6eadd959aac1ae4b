"""``SaveFilesAsArtifactsPlugin``: files in the user's message become artifacts (google-adk's)."""

from __future__ import annotations

import copy
import logging
import threading
from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import CallbackContext, InvocationContext
from adk_rx.plugins.base import BasePlugin

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent

__all__ = ["MAX_INLINE_FILE_BYTES", "SaveFilesAsArtifactsPlugin"]

log = logging.getLogger("adk_rx.plugins")

MAX_INLINE_FILE_BYTES = 20 * 1024 * 1024


class SaveFilesAsArtifactsPlugin(BasePlugin):
    """Saves each inline file of a user message as an artifact and leaves a note in its place.

    The file is named by its ``display_name`` (else ``artifact_<invocation id>_<index>``); a
    ``user:`` name keeps it across the user's sessions. The message the agent sees holds
    ``[Uploaded Artifact: "<name>"]`` instead of the bytes (give the agent a tool that loads
    artifacts to read it); a file over 20 MB is not saved and the note says so. The saved
    versions reach the invocation's first agent event as its ``artifact_delta``. Without an
    artifact service the message is left as it is. google-adk also attaches a file
    reference when the store gives a model-readable URI (``gs://``, ``https://``); adk_rx's
    stores give none, so no reference is attached.

    Args:
        name: the plugin's name.
        attach_file_reference: kept for google-adk's signature (see above).
    """

    def __init__(
        self, name: str = "save_files_as_artifacts_plugin", *, attach_file_reference: bool = True
    ) -> None:
        super().__init__(name)
        self._attach_file_reference = attach_file_reference
        self._pending: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> Observable[types.Content] | None:
        """The message with each inline file saved and replaced by a note."""
        service = invocation_context.artifact_service
        if service is None:
            log.warning("SaveFilesAsArtifactsPlugin needs an artifact service; files stay inline")
            return None
        parts = list(user_message.parts or [])
        if not any(p.inline_data is not None for p in parts):
            return None
        ctx = invocation_context

        def replace(index: int, part: types.Part) -> Observable[tuple[list[types.Part], Any]]:
            blob = part.inline_data
            if blob is None:
                return rx.just(([part], None))
            name = blob.display_name or f"artifact_{ctx.invocation_id}_{index}"
            size = len(blob.data or b"")
            if size > MAX_INLINE_FILE_BYTES:
                message = (
                    f"File {name} ({size / (1024 * 1024):.2f} MB) exceeds the maximum "
                    f"supported size of {MAX_INLINE_FILE_BYTES / (1024 * 1024):.0f}MB. "
                    "Please upload a smaller file."
                )
                log.warning(message)
                return rx.just(([types.Part(text=f"[Upload Error: {message}]")], None))
            saved = service.save_artifact(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                session_id=ctx.session.id,
                filename=name,
                artifact=copy.copy(part),
            )
            note = types.Part(text=f'[Uploaded Artifact: "{name}"]')
            return saved.pipe(
                ops.map(lambda version: ([note], (name, version))),
                ops.catch(lambda error, _: _kept(part, name, error)),
            )

        def done(results: list[tuple[list[types.Part], Any]]) -> types.Content:
            delta = dict(saved for _, saved in results if saved is not None)
            if delta:
                with self._lock:
                    self._pending.setdefault(ctx.invocation_id, {}).update(delta)
            new_parts = [p for kept, _ in results for p in kept]
            return types.Content(role=user_message.role, parts=new_parts)

        return rx.concat(*(replace(i, p) for i, p in enumerate(parts))).pipe(
            ops.to_list(), ops.map(done)
        )

    def before_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> None:
        """Puts the versions saved for this invocation in the agent's first event."""
        with self._lock:
            pending = self._pending.pop(callback_context.invocation_id, None)
        if pending:
            callback_context.actions.artifact_delta.update(pending)


def _kept(
    part: types.Part, name: str, error: Exception
) -> Observable[tuple[list[types.Part], Any]]:
    log.error("SaveFilesAsArtifactsPlugin could not save %s: %s", name, error)
    return rx.just(([part], None))
