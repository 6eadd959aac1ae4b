"""InvocationServices: what every agent, tool and callback of an invocation may use.

The stores (sessions, artifacts, memory, credentials), the plugins, the schedulers and whether
the app is resumable: one frozen value per Runner, which every
:class:`~adk_rx.context.InvocationContext` of its invocations references (``ctx.services``)
instead of copying each part. A Runner's :class:`~adk_rx.runner.services.TurnServices` is
one, with what only the Runner needs besides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adk_rx.plugins import PluginManager

if TYPE_CHECKING:
    from reactivex.abc import SchedulerBase

    from adk_rx.artifacts.base import BaseArtifactService
    from adk_rx.auth.credential_service import BaseCredentialService
    from adk_rx.memory.base import BaseMemoryService
    from adk_rx.models.context_cache import ContextCacheConfig
    from adk_rx.sessions.base import BaseSessionService

__all__ = ["InvocationServices"]


@dataclass(frozen=True, slots=True, kw_only=True)
class InvocationServices:
    """The services of an invocation's agents, tools and callbacks.

    Attributes:
        session_service: where sessions and events are stored.
        artifact_service: where artifacts are stored (None: artifacts are refused).
        memory_service: long-term memory (None: memory searches are refused).
        credential_service: where users' credentials for tools are kept (None: a credential
            lasts one invocation).
        plugins: the plugins applied to every invocation.
        io_scheduler: where blocking work runs (None: the shared I/O pool).
        timer_scheduler: where timeouts and delays run (None: reactivex's default, which
            starts a thread per timer; a Runner always gives one).
        is_resumable: agents record their progress as events (a resumable app).
        context_cache_config: the app's context caching, put on every model request.
    """

    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None = None
    memory_service: BaseMemoryService | None = None
    credential_service: BaseCredentialService | None = None
    plugins: PluginManager = field(default_factory=PluginManager)
    io_scheduler: SchedulerBase | None = None
    timer_scheduler: SchedulerBase | None = None
    is_resumable: bool = False
    context_cache_config: ContextCacheConfig | None = None
