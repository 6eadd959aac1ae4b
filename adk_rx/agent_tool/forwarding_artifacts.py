"""The artifact service of an AgentTool's child run: the caller's session's artifacts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types
from reactivex import Observable

from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.errors import ConfigurationError

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["ForwardingArtifactService"]


class ForwardingArtifactService(BaseArtifactService):
    """Reads and writes the artifacts of the calling tool's session, whatever session asks.

    A save goes through the caller's ``tool_context.save_artifact``, so it is recorded in the
    caller's ``artifact_delta`` too.

    Args:
        tool_context: the context of the AgentTool call.
    """

    def __init__(self, tool_context: ToolContext) -> None:
        self.tool_context = tool_context
        ctx = tool_context.invocation_context
        if ctx.services.artifact_service is None:
            raise ConfigurationError(
                "no artifact service is configured; pass artifact_service= to the Runner"
            )
        self.inner = ctx.services.artifact_service
        self.scope = {
            "app_name": ctx.app_name,
            "user_id": ctx.user_id,
            "session_id": ctx.session.id,
        }

    def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: types.Part
    ) -> Observable[int]:
        """Saves into the caller's session (recorded in the caller's artifact_delta)."""
        return self.tool_context.save_artifact(filename, artifact)

    def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> Observable[types.Part]:
        """Loads from the caller's session."""
        return self.inner.load_artifact(**self.scope, filename=filename, version=version)

    def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> Observable[list[str]]:
        """Lists the caller's session's artifacts."""
        return self.inner.list_artifact_keys(**self.scope)

    def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[list[int]]:
        """Lists versions in the caller's session."""
        return self.inner.list_versions(**self.scope, filename=filename)

    def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> Observable[None]:
        """Deletes from the caller's session."""
        return self.inner.delete_artifact(**self.scope, filename=filename)
