"""Span and metric attribute names, and the JSON form of contents put on spans.

The names follow the OpenTelemetry GenAI semantic conventions; ``adk_rx.*`` names are this
runtime's own. Contents (prompts, replies, tool arguments and results) go on spans only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from google.genai import types

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "capture_content",
    "contents_json",
    "value_json",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable that puts contents (messages, tool arguments) on spans when true."""

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_DESCRIPTION = "gen_ai.agent.description"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"

INVOCATION_ID = "adk_rx.invocation_id"
APP_NAME = "adk_rx.app_name"
ERROR_CODE = "adk_rx.error_code"
OUTCOME = "adk_rx.outcome"
BRANCH = "adk_rx.branch"
COST = "adk_rx.cost"


def capture_content() -> bool:
    """True when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() == "true"


def contents_json(contents: list[types.Content] | types.Content | None) -> str:
    """Contents as a JSON array of ``{"role", "parts"}`` objects (bytes left out)."""
    if contents is None:
        return "[]"
    items = contents if isinstance(contents, list) else [contents]
    return json.dumps(
        [
            c.model_dump(
                mode="json",
                exclude_none=True,
                exclude={"parts": {"__all__": {"inline_data": {"data"}}}},
            )
            for c in items
        ],
        ensure_ascii=False,
    )


def value_json(value: Any) -> str:
    """Any JSON-compatible value as JSON text (other values through ``str``)."""
    return json.dumps(value, ensure_ascii=False, default=str)
