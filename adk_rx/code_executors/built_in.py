"""BuiltInCodeExecutor: the model runs the code itself (Gemini's code execution tool)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from google.genai import types
from reactivex import Observable

from adk_rx.code_executors.base import BaseCodeExecutor
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult
from adk_rx.errors import ConfigurationError
from adk_rx.rx._engine.sync import just

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["BuiltInCodeExecutor"]


class BuiltInCodeExecutor(BaseCodeExecutor):
    """Turns on the model's own code execution (Gemini's ``code_execution`` tool).

    Every request of the agent declares the tool; the model writes and runs the code on its
    side and answers with ``executable_code`` and ``code_execution_result`` parts, which are
    stored with its event (``adk-rx run`` and the web page show them) and sent back with the
    history. Nothing runs locally. A model whose name is not a Gemini model is refused at its
    first request, as in google-adk (set ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK=true`` to send
    the tool anyway, for a proxy that serves Gemini under another name).
    """

    def execute_code(
        self, ctx: InvocationContext, code_input: CodeExecutionInput
    ) -> Observable[CodeExecutionResult]:
        """Nothing to run here: the model ran the code (an empty result)."""
        del ctx, code_input
        return just(CodeExecutionResult())

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        """Declares Gemini's code execution tool in the request."""
        if not _is_gemini(llm_request.model) and not _check_disabled():
            raise ConfigurationError(
                f"Gemini code execution tool is not supported for model {llm_request.model}"
            )
        config = llm_request.config
        config.tools = [*(config.tools or []), types.Tool(code_execution=types.ToolCodeExecution())]


_PATH_PATTERNS = (
    re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/(.+)$"),
    re.compile(r"^apigee/(?:[^/]+/)?(?:[^/]+/)?(.+)$"),
)


def _is_gemini(model: str | None) -> bool:
    """google-adk's test: the model's name (past a Vertex, Apigee, ``models/`` or provider
    prefix) starts with ``gemini-``."""
    if not model:
        return False
    name = model
    for pattern in _PATH_PATTERNS:
        match = pattern.match(model)
        if match:
            name = match.group(1)
            break
    else:
        if model.startswith("models/"):
            name = model[len("models/") :]
        elif "/" in model and not model.startswith("projects/"):
            name = model.rsplit("/", 1)[1]
    return name.startswith("gemini-")


def _check_disabled() -> bool:
    value = os.environ.get("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "0")
    return value.strip().lower() in ("1", "true", "yes", "on")
