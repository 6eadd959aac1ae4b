"""What happens to the traceback of a tool that raised.

The model sees a short ``{"error": "<type>: <message>"}`` so it can recover; the developer
needs the file and line. So the error is also

* logged on the ``adk_rx.tools`` logger (a child of ``adk_rx``) at WARNING, with the
  traceback, the tool name, the call id and the invocation id;
* kept on the function-response event, in ``custom_metadata[TRACEBACKS_KEY]`` (call id ->
  formatted traceback), so a stored session shows it (the web page's inspector does);
  the model never sees ``custom_metadata``.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from adk_rx.errors import AdkRxError

__all__ = ["TRACEBACKS_KEY", "error_text", "format_tool_error", "log_tool_error"]

TRACEBACKS_KEY = "adk_rx:tool_tracebacks"
"""The ``Event.custom_metadata`` key holding call id -> traceback of the tools that raised."""

_log = logging.getLogger("adk_rx.tools")
_MAX_CHARS = 8_000  # a traceback kept on an event; the log has the whole one


def error_text(exc: BaseException) -> str:
    """The short text the model sees: ``"<type>: <message>"`` (adk_rx errors: the message)."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, AdkRxError):
        return message
    return f"{type(exc).__name__}: {message}"


def format_tool_error(exc: BaseException) -> str:
    """The traceback of ``exc`` as text, cut to a bounded length from the start."""
    text = "".join(traceback.format_exception(exc))
    return text if len(text) <= _MAX_CHARS else "...\n" + text[-_MAX_CHARS:]


def log_tool_error(tool_name: Any, call_id: Any, invocation_id: str, exc: BaseException) -> None:
    """Logs a tool's exception with its traceback (``adk_rx.tools``, WARNING)."""
    _log.warning(
        "tool %r raised %s (call %s, invocation %s); the model gets {'error': ...}",
        tool_name,
        error_text(exc),
        call_id,
        invocation_id,
        exc_info=exc,
    )
