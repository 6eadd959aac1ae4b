"""Contexts: what callbacks and tools may see and do during an invocation.

* :class:`InvocationContext` - what one agent carries while it runs within an invocation
  (defined in :mod:`adk_rx.invocation_context`, exported here as well).
* :class:`ReadonlyContext` - read-only view for instruction providers.
* :class:`CallbackContext` - state writes and artifact saves recorded as the next event's
  actions (never written through to the session).
* :class:`ToolContext` - a callback context for one function call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.auth.tool_auth import get_auth_response, request_credential
from adk_rx.errors import ConfigurationError
from adk_rx.events import EMPTY_ACTIONS, Event, EventActions, ToolConfirmation
from adk_rx.invocation_context import InvocationContext, new_invocation_id
from adk_rx.state import State

if TYPE_CHECKING:
    from adk_rx.artifacts.base import BaseArtifactService
    from adk_rx.auth.config import AuthConfig
    from adk_rx.auth.credential import AuthCredential
    from adk_rx.memory.base import SearchMemoryResponse

__all__ = [
    "ActionsBuilder",
    "CallbackContext",
    "InvocationContext",
    "ReadonlyContext",
    "ToolContext",
    "new_invocation_id",
]


class ReadonlyContext:
    """What instruction providers may read: identity, user message, state and events."""

    __slots__ = ("_ctx",)

    def __init__(self, invocation_context: InvocationContext) -> None:
        self._ctx = invocation_context

    @property
    def invocation_context(self) -> InvocationContext:
        """The underlying invocation context."""
        return self._ctx

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started the invocation."""
        return self._ctx.user_content

    @property
    def invocation_id(self) -> str:
        """The invocation id (``e-<uuid>``)."""
        return self._ctx.invocation_id

    @property
    def branch(self) -> str | None:
        """The branch path of the running agent."""
        return self._ctx.branch

    @property
    def agent_name(self) -> str:
        """The running agent's name."""
        return self._ctx.agent.name

    @property
    def app_name(self) -> str:
        """The app name."""
        return self._ctx.session.app_name

    @property
    def user_id(self) -> str:
        """The user id."""
        return self._ctx.session.user_id

    @property
    def session_id(self) -> str:
        """The session id."""
        return self._ctx.session.id

    @property
    def state(self) -> Mapping[str, Any]:
        """The session state, read-only."""
        return MappingProxyType(self._ctx.session.state)

    @property
    def events(self) -> list[Event]:
        """The session's events so far (do not modify)."""
        return self._ctx.session.events


@dataclass(slots=True)
class ActionsBuilder:
    """Mutable actions collected by a callback or tool; frozen into the event's actions."""

    state_delta: dict[str, Any] = field(default_factory=dict)
    artifact_delta: dict[str, int] = field(default_factory=dict)
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    skip_summarization: bool | None = None
    end_of_agent: bool | None = None
    requested_auth_configs: dict[str, Any] = field(default_factory=dict)
    requested_tool_confirmations: dict[str, ToolConfirmation] = field(default_factory=dict)

    def freeze(self) -> EventActions:
        """The collected actions as an immutable EventActions (shared empty when empty)."""
        if not (
            self.state_delta
            or self.artifact_delta
            or self.transfer_to_agent is not None
            or self.escalate is not None
            or self.skip_summarization is not None
            or self.end_of_agent is not None
            or self.requested_auth_configs
            or self.requested_tool_confirmations
        ):
            return EMPTY_ACTIONS
        return EventActions(
            state_delta=dict(self.state_delta),
            artifact_delta=dict(self.artifact_delta),
            transfer_to_agent=self.transfer_to_agent,
            escalate=self.escalate,
            skip_summarization=self.skip_summarization,
            end_of_agent=self.end_of_agent,
            requested_auth_configs=dict(self.requested_auth_configs),
            requested_tool_confirmations=dict(self.requested_tool_confirmations),
        )


class CallbackContext(ReadonlyContext):
    """A context whose state writes and artifact saves become an event's actions.

    ``state`` reads the session state and records writes in ``actions.state_delta``; the
    session itself changes only when the Runner applies the event that carries them.
    """

    __slots__ = ("_actions", "_state", "_writer")

    def __init__(
        self,
        invocation_context: InvocationContext,
        actions: ActionsBuilder | None = None,
        *,
        writer: str | None = None,
    ) -> None:
        self._ctx = invocation_context  # (ReadonlyContext's __init__, inline: one per step)
        self._actions = actions  # (made when first used, as the State: most never are)
        self._writer = writer
        self._state: State | None = None

    @property
    def actions(self) -> ActionsBuilder:
        """What this context's callbacks or tool did, for the actions of the event that
        carries their outcome."""
        actions = self._actions
        if actions is None:
            actions = self._actions = ActionsBuilder()
        return actions

    @actions.setter
    def actions(self, actions: ActionsBuilder) -> None:
        self._actions = actions

    def frozen_actions(self) -> EventActions:
        """``actions.freeze()``: the shared empty actions when nothing was recorded."""
        actions = self._actions
        return EMPTY_ACTIONS if actions is None else actions.freeze()

    @property
    def state(self) -> State:  # type: ignore[override]
        """The session state; writes are recorded as this context's state delta."""
        state = self._state
        if state is None:
            state = self._state = State(
                self._ctx.session.state, self.actions.state_delta, writer=self._writer
            )
        return state

    @property
    def cancelled(self) -> bool:
        """True once the invocation is cancelled; long sync work should check it."""
        return self._ctx.cancelled

    def _artifacts(self) -> BaseArtifactService:
        service = self._ctx.services.artifact_service
        if service is None:
            raise ConfigurationError(
                "no artifact service is configured; pass artifact_service= to the Runner"
            )
        return service

    def save_artifact(self, filename: str, artifact: types.Part) -> Observable[int]:
        """Saves a new version of ``filename``; emits the version and records it."""
        ctx = self._ctx

        def record(version: int) -> None:
            self.actions.artifact_delta[filename] = version

        return (
            self._artifacts()
            .save_artifact(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                session_id=ctx.session.id,
                filename=filename,
                artifact=artifact,
            )
            .pipe(ops.do_action(record))
        )

    def load_artifact(self, filename: str, version: int | None = None) -> Observable[types.Part]:
        """Emits the artifact (latest version when None), or completes empty."""
        ctx = self._ctx
        return self._artifacts().load_artifact(
            app_name=ctx.app_name,
            user_id=ctx.user_id,
            session_id=ctx.session.id,
            filename=filename,
            version=version,
        )

    def list_artifacts(self) -> Observable[list[str]]:
        """Emits the file names of the session's artifacts."""
        ctx = self._ctx
        return self._artifacts().list_artifact_keys(
            app_name=ctx.app_name, user_id=ctx.user_id, session_id=ctx.session.id
        )


class ToolContext(CallbackContext):
    """The context of one function call.

    ``tool_name`` (a constructor argument) names the tool in errors about its state writes.

    Attributes:
        function_call_id: the id of the call being answered.
        tool_confirmation: the user's answer, when this call is being resumed after a
            confirmation request.
        progress_sink: where :meth:`report_progress` sends a report (set by the flow for a
            tool whose ``reports_progress`` is true); None drops reports.
        usage_metadata: token usage the tool spent on models (an AgentTool's child run); it
            is added to the function-response event.
        expired: the call's deadline (the tool's ``timeout`` or ``RunConfig.tool_timeout``)
            passed; ``cancelled`` is true from then on.
    """

    __slots__ = (
        "expired",
        "function_call_id",
        "progress_sink",
        "tool_confirmation",
        "usage_metadata",
    )

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        function_call_id: str | None = None,
        tool_confirmation: ToolConfirmation | None = None,
        actions: ActionsBuilder | None = None,
        tool_name: str | None = None,
    ) -> None:
        self._ctx = invocation_context  # (CallbackContext's __init__, inline: one per call)
        self._actions = actions
        self._writer = tool_name  # (named "tool '<name>'" when its State is made)
        self._state = None
        self.function_call_id = function_call_id
        self.tool_confirmation = tool_confirmation
        self.progress_sink: Callable[[Any], None] | None = None
        self.usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
        self.expired = False  # the call's own deadline passed

    @property
    def state(self) -> State:  # type: ignore[override]
        """The session state; writes are recorded as this call's state delta."""
        state = self._state
        if state is None:
            name = self._writer
            state = self._state = State(
                self._ctx.session.state,
                self.actions.state_delta,
                writer=f"tool {name!r}" if name else None,
            )
        return state

    @property
    def cancelled(self) -> bool:
        """True once the invocation is cancelled or this call's deadline passed; long sync
        work should check it."""
        return self.expired or self._ctx.cancelled

    def report_progress(self, progress: Any) -> None:
        """Reports progress of this call: a partial event of the calling agent, never stored.

        ``progress`` (JSON-compatible) goes into the event's ``custom_metadata`` under
        ``"tool_progress"`` with the call's id and tool name. Reports are dropped once the
        call has answered, and for tools that do not declare ``reports_progress``.
        """
        sink = self.progress_sink
        if sink is not None:
            sink(progress)

    def request_confirmation(self, hint: str = "", payload: Any = None) -> None:
        """Asks the user to confirm this call; the answer resumes it in a later turn."""
        if not self.function_call_id:
            raise ConfigurationError("request_confirmation needs a function call id")
        self.actions.requested_tool_confirmations[self.function_call_id] = ToolConfirmation(
            hint=hint, payload=payload
        )

    def request_credential(self, auth_config: AuthConfig) -> None:
        """Asks the user for a credential for this call (google-adk's ``request_credential``).

        The flow emits an ``adk_request_credential`` call (for OAuth2, with the sign-in URI)
        and ends the turn; the user's answer runs this call again, and
        :meth:`get_auth_response` then returns the credential.
        """
        request_credential(self, auth_config)

    def get_auth_response(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The credential the user gave for ``auth_config`` (this turn's answer or a stored
        one), an OAuth2 code exchanged and an expired token refreshed; None when there is
        none. Blocking: it may make a token request.

        Raises:
            CredentialError: the code exchange failed (a wrong or used code).
        """
        return get_auth_response(self, auth_config)

    def search_memory(self, query: str) -> Observable[SearchMemoryResponse]:
        """Searches the memory service for this app and user."""
        service = self._ctx.services.memory_service
        if service is None:
            raise ConfigurationError(
                "no memory service is configured; pass memory_service= to the Runner"
            )
        return service.search_memory(
            app_name=self._ctx.app_name, user_id=self._ctx.user_id, query=query
        )
