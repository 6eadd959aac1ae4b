"""OpenTelemetry traces and metrics of adk_rx, and a logging plugin.

A Runner (``Runner(tracer_provider=..., meter_provider=...)``, else OpenTelemetry's global
providers) records, per invocation::

    invocation
      invoke_agent {agent}              one per agent run (sub-agents and transfers nest)
        call_llm                        one per model call
        execute_tool {tool}             one per tool call (an AgentTool's run nests under it)

with the GenAI semantic-convention attributes (``gen_ai.operation.name``,
``gen_ai.agent.name``, ``gen_ai.conversation.id``, ``gen_ai.request.model``,
``gen_ai.usage.*_tokens``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``) and
``adk_rx.invocation_id`` on every span; metrics are listed in ``metrics.py``. Contents go on
spans only with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. With no provider
configured nothing is created: each invocation checks once and skips.

:class:`LoggingPlugin` logs the same moments through the standard ``logging`` module, with
no OpenTelemetry setup at all.
"""

from adk_rx.telemetry.attributes import CAPTURE_CONTENT_ENV
from adk_rx.telemetry.logging_plugin import LoggingPlugin
from adk_rx.telemetry.runner_telemetry import NO_TRACE, Telemetry, is_configured
from adk_rx.telemetry.spans import InvocationTrace, TraceScope

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "NO_TRACE",
    "InvocationTrace",
    "LoggingPlugin",
    "Telemetry",
    "TraceScope",
    "is_configured",
]
