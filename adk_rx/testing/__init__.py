"""Testing kit: a scripted model, a tree copy that uses it, readable event sequences, and
service conformance suites."""

from adk_rx.testing.agent_copy import with_model
from adk_rx.testing.conformance import SESSION_SERVICE_CHECKS, check_session_service
from adk_rx.testing.memory_conformance import (
    MEMORY_SERVICE_CHECKS,
    RANKED_MEMORY_CHECKS,
    check_memory_service,
)
from adk_rx.testing.scripted import ScriptedLlm
from adk_rx.testing.scripted_live import ScriptedLiveLlm
from adk_rx.testing.simplify import simplify_content, simplify_events

__all__ = [
    "MEMORY_SERVICE_CHECKS",
    "RANKED_MEMORY_CHECKS",
    "SESSION_SERVICE_CHECKS",
    "ScriptedLiveLlm",
    "ScriptedLlm",
    "check_memory_service",
    "check_session_service",
    "simplify_content",
    "simplify_events",
    "with_model",
]
