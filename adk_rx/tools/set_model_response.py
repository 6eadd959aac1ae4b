"""``set_model_response``: the tool an agent with tools and an output schema answers through."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pydantic
import reactivex as rx
from reactivex import Observable

from adk_rx.rx._engine.sync import just
from adk_rx.tools.base import BaseTool
from adk_rx.tools.function import ToolArgumentsError
from adk_rx.tools.output_schema import SET_MODEL_RESPONSE, json_schema, schema_adapter

if TYPE_CHECKING:
    from adk_rx.context import ToolContext

__all__ = ["SetModelResponseTool"]


class SetModelResponseTool(BaseTool):
    """Takes the agent's final answer as arguments of the output schema.

    A schema that is not an object is wrapped as ``{"result": <schema>}`` (function
    parameters are always an object). A valid call answers ``{"result": value}`` and ends the
    agent's turn (skip_summarization); invalid arguments become an error the model sees.

    Args:
        schema: the agent's output schema (a pydantic model or any type a TypeAdapter takes).
    """

    def __init__(self, schema: Any) -> None:
        parameters = json_schema(schema)
        self._wrapped = parameters.get("type") != "object"
        if self._wrapped:
            parameters = {
                "type": "object",
                "properties": {"result": parameters},
                "required": ["result"],
            }
        super().__init__(
            name=SET_MODEL_RESPONSE,
            description="Give your final answer by calling this tool with the answer as its "
            "arguments; call it once, after any other tool you need.",
            parameters=parameters,
        )
        self.schema = schema

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Validates the answer; emits ``{"result": value}``."""
        adapter = schema_adapter(self.schema)
        raw = args.get("result") if self._wrapped else dict(args)
        try:
            value = adapter.dump_python(adapter.validate_python(raw), mode="json")
        except pydantic.ValidationError as exc:
            return rx.throw(ToolArgumentsError(f"invalid {SET_MODEL_RESPONSE} arguments: {exc}"))
        tool_context.actions.skip_summarization = True
        return just({"result": value})
