"""Sessions into memory after each invocation (``App(memory_config=MemoryConfig(...))``).

A plugin of the Runner's own: its ``after_run_callback`` runs after the last event of a run
that ends normally, so the whole turn is in the session view it adds::

    agent events --...--| then add_session_to_memory(session) --| then the run completes

A memory service that fails is logged and the run still succeeds: remembering is a side
effect of the turn, not part of its answer. Cancelled and failed runs are not added (the
next run that ends normally adds the whole session, theirs included).
"""

from __future__ import annotations

import logging
from typing import Any

from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.memory.base import BaseMemoryService
from adk_rx.plugins import BasePlugin
from adk_rx.rx._engine.sync import empty

__all__ = ["SessionRemembering", "remembering"]

_log = logging.getLogger("adk_rx.runner")


class SessionRemembering(BasePlugin):
    """Adds the session to the memory service after each run that ends normally."""

    def __init__(self, memory_service: BaseMemoryService) -> None:
        super().__init__("adk_rx_add_session_to_memory")
        self.memory_service = memory_service

    def after_run_callback(self, *, invocation_context: InvocationContext) -> Any:
        """A Completable: the session added (or the failure logged)."""
        session = invocation_context.session

        def logged(error: Exception, _: Any) -> Observable[Any]:
            _log.warning(
                "adding session %s to memory failed: %s", session.id, error, exc_info=error
            )
            return empty()

        return self.memory_service.add_session_to_memory(session).pipe(ops.catch(logged))


def remembering(memory_service: BaseMemoryService | None) -> SessionRemembering:
    """The plugin, or ConfigurationError when the Runner has no memory service."""
    if memory_service is None:
        raise ConfigurationError(
            "App(memory_config=MemoryConfig(add_session_after_invocation=True)) needs a "
            "memory service: pass memory_service= to the Runner"
        )
    return SessionRemembering(memory_service)
