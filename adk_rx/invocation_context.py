"""InvocationContext: what one agent carries while it runs within an invocation.

The runtime makes one per agent per invocation (copied, never mutated, when it descends into
a sub-agent or a branch); the parts shared by the whole invocation (LLM-call budget,
cancellation, scratch data) live in one :class:`~adk_rx.invocation_shared.InvocationShared`,
the services of the Runner in one :class:`~adk_rx.services.InvocationServices`. What
callbacks and tools see of it are the views in :mod:`adk_rx.context`, which also exports
these names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_rx.budget import budget_for
from adk_rx.events import new_event_id
from adk_rx.invocation_shared import InvocationShared
from adk_rx.run_config import RunConfig
from adk_rx.services import InvocationServices

if TYPE_CHECKING:
    from adk_rx.agents.base import BaseAgent
    from adk_rx.agents.call import NodeCall
    from adk_rx.artifacts.base import BaseArtifactService
    from adk_rx.live.queue import LiveRequestQueue
    from adk_rx.memory.base import BaseMemoryService
    from adk_rx.resumability.log import ResumeLog
    from adk_rx.sessions.base import BaseSessionService
    from adk_rx.sessions.session import Session
    from adk_rx.telemetry.spans import TraceScope

__all__ = ["InvocationContext", "new_invocation_id"]


def new_invocation_id() -> str:
    """A fresh invocation id: ``e-<uuid4>`` (random version-4 UUID, dashed)."""
    h = new_event_id()
    return f"e-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(slots=True)
class InvocationContext:
    """Everything one agent needs while it runs within an invocation.

    Copies are made with :meth:`copy` when the runtime descends into a sub-agent or a
    branch; ``end_invocation`` is per copy, ``shared`` is one object per invocation and
    ``services`` one per Runner. ``resume`` holds what the stored events say while an
    invocation is being resumed (None otherwise).
    """

    session: Session
    agent: BaseAgent
    services: InvocationServices
    invocation_id: str = field(default_factory=new_invocation_id)
    branch: str | None = None
    user_content: types.Content | None = None
    run_config: RunConfig = field(default_factory=RunConfig)
    end_invocation: bool = False
    shared: InvocationShared = None  # type: ignore[assignment]
    trace: TraceScope | None = None  # the span this agent runs in; None when nobody listens
    live_request_queue: LiveRequestQueue | None = None  # set by Runner.run_live
    resume: ResumeLog | None = None
    node_call: NodeCall | None = None  # set by a workflow for the agent it runs as a node

    def __post_init__(self) -> None:
        if self.shared is None:
            self.shared = InvocationShared(budget_for(self.run_config))

    def copy(self, **changes: Any) -> InvocationContext:
        """A copy with some fields changed; ``shared`` stays the same object.

        Raises:
            AttributeError: a change names no field.
        """
        # Field by field as plain attribute copies (a copy is made per agent run and per
        # branch: dataclasses.replace or a getattr loop cost a call per field); a test checks
        # that every field is here.
        new = object.__new__(type(self))
        new.session = self.session
        new.agent = self.agent
        new.services = self.services
        new.invocation_id = self.invocation_id
        new.branch = self.branch
        new.user_content = self.user_content
        new.run_config = self.run_config
        new.end_invocation = False
        new.shared = self.shared
        new.trace = self.trace
        new.live_request_queue = self.live_request_queue
        new.resume = self.resume
        new.node_call = self.node_call
        if changes:
            for name, value in changes.items():
                setattr(new, name, value)
        return new

    @property
    def session_service(self) -> BaseSessionService:
        """Where the session is stored (``services.session_service``)."""
        return self.services.session_service

    @property
    def artifact_service(self) -> BaseArtifactService | None:
        """Where artifacts are stored (``services.artifact_service``)."""
        return self.services.artifact_service

    @property
    def memory_service(self) -> BaseMemoryService | None:
        """Long-term memory (``services.memory_service``)."""
        return self.services.memory_service

    @property
    def app_name(self) -> str:
        """The session's app name."""
        return self.session.app_name

    @property
    def user_id(self) -> str:
        """The session's user id."""
        return self.session.user_id

    @property
    def cancelled(self) -> bool:
        """True once the invocation was cancelled."""
        return self.shared.cancelled

    def increment_llm_call_count(self) -> None:
        """Counts a model call against the invocation's budget (``RunConfig.max_llm_calls``,
        ``max_tokens``, ``max_cost``); raises BudgetExceededError when it is spent."""
        self.shared.budget.count_llm_call()
