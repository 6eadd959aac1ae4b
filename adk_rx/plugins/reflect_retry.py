"""``ReflectAndRetryToolPlugin``: a failing tool's error goes back to the model with guidance
to reflect and try again, up to a limit (google-adk's, same response shape and texts)."""

from __future__ import annotations

import enum
import json
import threading
from typing import Any

import pydantic

from adk_rx.context import ToolContext
from adk_rx.errors import ConfigurationError
from adk_rx.plugins.base import BasePlugin
from adk_rx.tools.base import BaseTool

__all__ = [
    "GLOBAL_SCOPE_KEY",
    "REFLECT_AND_RETRY_RESPONSE_TYPE",
    "ReflectAndRetryToolPlugin",
    "ToolFailureResponse",
    "TrackingScope",
]

REFLECT_AND_RETRY_RESPONSE_TYPE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
"""The ``response_type`` of a response this plugin made (google-adk's value)."""
GLOBAL_SCOPE_KEY = "__global_reflect_and_retry_scope__"
"""The key failures are counted under with ``TrackingScope.GLOBAL`` (google-adk's value)."""


class TrackingScope(enum.Enum):
    """How long failures are counted: per invocation (the default) or for the plugin's life."""

    INVOCATION = "invocation"
    GLOBAL = "global"


class ToolFailureResponse(pydantic.BaseModel):
    """The tool response the model gets in place of a failure."""

    response_type: str = REFLECT_AND_RETRY_RESPONSE_TYPE
    error_type: str = ""
    error_details: str = ""
    retry_count: int = 0
    reflection_guidance: str = ""


class ReflectAndRetryToolPlugin(BasePlugin):
    """Turns a tool's failure into guidance for the model, up to ``max_retries`` in a row.

    A tool that raises (or whose result :meth:`extract_error_from_result` finds an error in)
    answers the model a :class:`ToolFailureResponse`: the error, the arguments and what to
    reconsider, with the attempt number. Failures are counted per tool within the scope
    (per invocation, or global); a success of the tool resets its count. Past the limit the
    error is raised again (``throw_exception_if_retry_exceeded``; the run fails with a
    ``CallbackError`` whose ``__cause__`` is the tool's error, as for any hook that raises)
    or the model is told not to use the tool again. Counting is thread-safe: tools of one step
    run concurrently.

    Args:
        name: the plugin's name.
        max_retries: failures in a row answered with guidance (0: none).
        throw_exception_if_retry_exceeded: raise the last error past the limit.
        tracking_scope: :class:`TrackingScope`.
    """

    def __init__(
        self,
        name: str = "reflect_retry_tool_plugin",
        max_retries: int = 3,
        throw_exception_if_retry_exceeded: bool = True,
        tracking_scope: TrackingScope = TrackingScope.INVOCATION,
    ) -> None:
        super().__init__(name)
        if max_retries < 0:
            raise ConfigurationError("max_retries must be a non-negative integer")
        self.max_retries = max_retries
        self.throw_exception_if_retry_exceeded = throw_exception_if_retry_exceeded
        self.scope = tracking_scope
        self._failures: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: Any,
    ) -> dict[str, Any] | None:
        """A result holding an error becomes guidance; a success resets the tool's count."""
        if isinstance(result, dict) and result.get("response_type") == (
            REFLECT_AND_RETRY_RESPONSE_TYPE
        ):
            return None
        error = self.extract_error_from_result(
            tool=tool, tool_args=tool_args, tool_context=tool_context, result=result
        )
        if error:
            return self._handle(tool, tool_args, tool_context, error)
        with self._lock:
            self._failures.get(self._scope_key(tool_context), {}).pop(tool.name, None)
        return None

    def extract_error_from_result(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: Any,
    ) -> dict[str, Any] | None:
        """The error a successful result holds, or None; override to detect your tools'."""
        return None

    def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """A raised error becomes guidance (or is raised again past the limit)."""
        return self._handle(tool, tool_args, tool_context, error)

    def _scope_key(self, tool_context: ToolContext) -> str:
        """The key failures are counted under; override for per-user or per-session counts."""
        if self.scope is TrackingScope.GLOBAL:
            return GLOBAL_SCOPE_KEY
        return tool_context.invocation_id

    def _handle(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Any
    ) -> dict[str, Any]:
        if self.max_retries == 0:
            return self._exceeded(tool, tool_args, error)
        with self._lock:
            counts = self._failures.setdefault(self._scope_key(tool_context), {})
            counts[tool.name] = attempt = counts.get(tool.name, 0) + 1
        if attempt <= self.max_retries:
            return self._reflection(tool, tool_args, error, attempt)
        return self._exceeded(tool, tool_args, error)

    def _exceeded(self, tool: BaseTool, tool_args: dict[str, Any], error: Any) -> dict[str, Any]:
        if self.throw_exception_if_retry_exceeded:
            raise error if isinstance(error, Exception) else Exception(str(error))
        guidance = _EXCEEDED.format(
            name=tool.name,
            retries=self.max_retries,
            details=_details(error),
            args=json.dumps(tool_args, indent=2, default=str),
        )
        return _response(error, self.max_retries, guidance)

    def _reflection(
        self, tool: BaseTool, tool_args: dict[str, Any], error: Any, attempt: int
    ) -> dict[str, Any]:
        guidance = _REFLECT.format(
            name=tool.name,
            attempt=attempt,
            retries=self.max_retries,
            details=_details(error),
            args=json.dumps(tool_args, indent=2, default=str),
        )
        return _response(error, attempt, guidance)


def _details(error: Any) -> str:
    return f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error)


def _response(error: Any, count: int, guidance: str) -> dict[str, Any]:
    return ToolFailureResponse(
        error_type=type(error).__name__ if isinstance(error, Exception) else "ToolError",
        error_details=str(error),
        retry_count=count,
        reflection_guidance=guidance.strip(),
    ).model_dump(mode="json")


_REFLECT = """
The call to tool `{name}` failed.

**Error Details:**
```
{details}
```

**Tool Arguments Used:**
```json
{args}
```

**Reflection Guidance:**
This is retry attempt **{attempt} of {retries}**. Analyze the error and the arguments you provided. Do not repeat the exact same call. Consider the following before your next attempt:

1.  **Invalid Parameters**: Does the error suggest that one or more arguments are incorrect, badly formatted, or missing? Review the tool's schema and your arguments.
2.  **State or Preconditions**: Did a previous step fail or not produce the necessary state/resource for this tool to succeed?
3.  **Alternative Approach**: Is this the right tool for the job? Could another tool or a different sequence of steps achieve the goal?
4.  **Simplify the Task**: Can you break the problem down into smaller, simpler steps?
5.  **Wrong Function Name**: Does the error indicates the tool is not found? Please check again and only use available tools.

Formulate a new plan based on your analysis and try a corrected or different approach.
"""  # noqa: E501  (google-adk's text, word for word)

_EXCEEDED = """
The tool `{name}` has failed consecutively {retries} times and the retry limit has been exceeded.

**Last Error:**
```
{details}
```

**Last Arguments Used:**
```json
{args}
```

**Final Instruction:**
**Do not attempt to use the `{name}` tool again for this task.** You must now try a different approach. Acknowledge the failure and devise a new strategy, potentially using other available tools or informing the user that the task cannot be completed.
"""  # noqa: E501  (google-adk's text, word for word)
