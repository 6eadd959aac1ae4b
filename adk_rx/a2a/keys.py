"""The metadata keys both ADKs put on A2A objects and on the events they make from them.

google-adk 2.13 names them so (``google.adk.a2a.converters.utils`` and
``agents/remote_a2a_agent.py``); adk_rx uses the same names, so an agent served by one ADK and
called by the other reads the same metadata.
"""

from __future__ import annotations

__all__ = [
    "A2A_PREFIX",
    "CONTEXT_ID",
    "DATA_TYPE",
    "IS_LONG_RUNNING",
    "TASK_ID",
    "adk_key",
]

ADK_PREFIX = "adk_"
"""The prefix of the keys a serving ADK writes into A2A metadata (``adk_app_name``...)."""

A2A_PREFIX = "a2a:"
"""The prefix of the keys a calling ADK writes into its events' ``custom_metadata``."""

TASK_ID = A2A_PREFIX + "task_id"
CONTEXT_ID = A2A_PREFIX + "context_id"


def adk_key(name: str) -> str:
    """``name`` as a serving ADK writes it into A2A metadata."""
    return ADK_PREFIX + name


DATA_TYPE = adk_key("type")
"""On a data part: what it carries (``function_call``, ``function_response``, ...)."""

IS_LONG_RUNNING = adk_key("is_long_running")
"""On a function-call data part: the call is long-running (the task waits for input)."""
