"""Testing kit: a scripted model, a tree copy that uses it, readable event sequences, and
service conformance suites."""

from adk_rx.testing.agent_copy import with_model
from adk_rx.testing.conformance import SESSION_SERVICE_CHECKS, check_session_service
from adk_rx.testing.scripted import ScriptedLlm
from adk_rx.testing.scripted_live import ScriptedLiveLlm
from adk_rx.testing.simplify import simplify_content, simplify_events

__all__ = [
    "SESSION_SERVICE_CHECKS",
    "ScriptedLiveLlm",
    "ScriptedLlm",
    "check_session_service",
    "simplify_content",
    "simplify_events",
    "with_model",
]
