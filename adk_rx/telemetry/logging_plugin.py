"""LoggingPlugin: one structured log line per invocation start and end, model call, tool call.

Works without any OpenTelemetry setup: lines go through the standard :mod:`logging` module
(logger ``adk_rx.telemetry.logging_plugin`` unless another is given), as ``key=value`` text
that log search tools parse, with the same fields as a dict in ``record.adk_rx`` for
structured handlers::

    adk_rx invocation_start invocation_id=e-... app=support user_id=u1 session_id=s1 agent=root
    adk_rx model_call invocation_id=e-... agent=root model=gemini-2.0-flash duration_ms=812.4
        input_tokens=1200 output_tokens=35 finish_reason=STOP
    adk_rx tool_call invocation_id=e-... agent=root tool=lookup call_id=adk-... duration_ms=3.1
    adk_rx invocation_end invocation_id=e-... agent=root outcome=ok duration_ms=905.0

A failed model or tool call is logged at WARNING with ``error=``; a failed run at ERROR. A
run cancelled by disposal ends without an ``invocation_end`` line (plugins are not called
after a disposal); its stored ``CANCELLED`` event records it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from adk_rx.plugins import BasePlugin

if TYPE_CHECKING:
    from adk_rx.context import CallbackContext, InvocationContext, ToolContext
    from adk_rx.models.llm_request import LlmRequest
    from adk_rx.models.llm_response import LlmResponse
    from adk_rx.tools.base import BaseTool

__all__ = ["LoggingPlugin"]


def _format(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


class LoggingPlugin(BasePlugin):
    """Logs invocations, model calls and tool calls, one structured line each.

    Args:
        name: the plugin's name.
        logger: where lines go (default ``logging.getLogger("adk_rx.telemetry.logging_plugin")``).
        level: the level of normal lines (failures use WARNING or ERROR).
    """

    def __init__(
        self,
        name: str = "logging",
        *,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
    ) -> None:
        super().__init__(name)
        self.logger = logger or logging.getLogger(__name__)
        self.level = level
        self._lock = threading.Lock()
        self._started: dict[tuple[str, ...], float] = {}
        self._models: dict[tuple[str, ...], str | None] = {}

    # -- bookkeeping ---------------------------------------------------------------------
    def _start(self, key: tuple[str, ...]) -> None:
        with self._lock:
            self._started[key] = time.perf_counter()

    def _elapsed_ms(self, key: tuple[str, ...], *, keep: bool = False) -> float | None:
        with self._lock:
            started = self._started.get(key) if keep else self._started.pop(key, None)
        if started is None:
            return None
        return round((time.perf_counter() - started) * 1000, 3)

    def _log(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if not self.logger.isEnabledFor(level):
            return
        fields = {k: v for k, v in fields.items() if v is not None}
        text = " ".join(f"{key}={_format(value)}" for key, value in fields.items())
        self.logger.log(
            level, "adk_rx %s %s", event, text, extra={"adk_rx": {"event": event, **fields}}
        )

    # -- invocation ----------------------------------------------------------------------
    def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        ctx = invocation_context
        self._start(("run", ctx.invocation_id))
        self._log(
            self.level,
            "invocation_start",
            {
                "invocation_id": ctx.invocation_id,
                "app": ctx.app_name,
                "user_id": ctx.user_id,
                "session_id": ctx.session.id,
                "agent": ctx.agent.name,
            },
        )

    def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._end(invocation_context, "ok", None)

    def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: BaseException
    ) -> None:
        self._end(invocation_context, "error", error)

    def _end(self, ctx: InvocationContext, outcome: str, error: BaseException | None) -> None:
        self._log(
            logging.ERROR if error is not None else self.level,
            "invocation_end",
            {
                "invocation_id": ctx.invocation_id,
                "session_id": ctx.session.id,
                "agent": ctx.agent.name,
                "outcome": outcome,
                "duration_ms": self._elapsed_ms(("run", ctx.invocation_id)),
                "llm_calls": ctx.shared.llm_calls,
                "error": None if error is None else f"{type(error).__name__}: {error}",
            },
        )

    # -- model calls ---------------------------------------------------------------------
    def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> None:
        key = ("model", callback_context.invocation_id, callback_context.agent_name)
        self._start(key)
        with self._lock:
            self._models[key] = llm_request.model

    def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> None:
        if llm_response.partial:
            return
        usage = llm_response.usage_metadata
        reason = llm_response.finish_reason
        key = ("model", callback_context.invocation_id, callback_context.agent_name)
        with self._lock:
            model = self._models.pop(key, None)
        self._log(
            self.level,
            "model_call",
            {
                "invocation_id": callback_context.invocation_id,
                "agent": callback_context.agent_name,
                "model": model or llm_response.model_version,
                "duration_ms": self._elapsed_ms(key),
                "input_tokens": usage.prompt_token_count if usage else None,
                "output_tokens": usage.candidates_token_count if usage else None,
                "finish_reason": getattr(reason, "value", reason),
                "error_code": llm_response.error_code,
            },
        )

    def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> None:
        key = ("model", callback_context.invocation_id, callback_context.agent_name)
        with self._lock:
            self._models.pop(key, None)
        self._log(
            logging.WARNING,
            "model_call",
            {
                "invocation_id": callback_context.invocation_id,
                "agent": callback_context.agent_name,
                "model": llm_request.model,
                "duration_ms": self._elapsed_ms(key),
                "error": f"{type(error).__name__}: {error}",
            },
        )

    # -- tool calls ----------------------------------------------------------------------
    def _tool_key(self, tool_context: ToolContext) -> tuple[str, ...]:
        return ("tool", tool_context.invocation_id, tool_context.function_call_id or "")

    def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> None:
        self._start(self._tool_key(tool_context))

    def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> None:
        failed = isinstance(result, dict) and "error" in result
        self._tool_line(tool, tool_context, result.get("error") if failed else None)

    def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> None:
        self._tool_line(tool, tool_context, f"{type(error).__name__}: {error}")

    def _tool_line(self, tool: BaseTool, tool_context: ToolContext, error: Any) -> None:
        key = self._tool_key(tool_context)
        with self._lock:
            if key not in self._started:
                return  # already logged (an error answered by on_tool_error)
        self._log(
            logging.WARNING if error is not None else self.level,
            "tool_call",
            {
                "invocation_id": tool_context.invocation_id,
                "agent": tool_context.agent_name,
                "tool": tool.name,
                "call_id": tool_context.function_call_id,
                "duration_ms": self._elapsed_ms(key),
                "error": error,
            },
        )
