"""An agent's output schema as values: its JSON schema and the validation of an answer.

Shared by the ``set_model_response`` tool (its parameters are the schema), AgentTool (the
child agent's answer becomes the validated value) and the LlmAgent's structured output
(``adk_rx.agents.structured_output``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import pydantic

__all__ = ["SET_MODEL_RESPONSE", "json_schema", "schema_adapter", "validate_output"]

SET_MODEL_RESPONSE = "set_model_response"
"""The name of the tool an agent with tools and an output schema answers through."""


@lru_cache(maxsize=256)
def schema_adapter(schema: Any) -> pydantic.TypeAdapter[Any]:
    """The (cached) pydantic adapter of an output schema."""
    return pydantic.TypeAdapter(schema)


def json_schema(schema: Any) -> dict[str, Any]:
    """The JSON schema of ``schema`` as pydantic writes it."""
    return schema_adapter(schema).json_schema()


def validate_output(schema: Any, text: str) -> Any:
    """The JSON value of ``text`` validated against ``schema``.

    A Markdown code fence around the JSON is tolerated (models add one often).

    Raises:
        pydantic.ValidationError: the text is not JSON of the schema.
    """
    adapter = schema_adapter(schema)
    value = adapter.validate_json(_unfenced(text))
    return adapter.dump_python(value, mode="json")


def _unfenced(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        newline = body.find("\n")
        return body[newline + 1 :] if newline >= 0 else body
    return stripped
