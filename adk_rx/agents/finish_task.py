"""``finish_task``: the tool a task-mode agent calls to end its task with an output.

Its parameters are the agent's ``output_schema`` (an object schema as it is, anything else
wrapped as ``{"result": <schema>}``), or ``{"result": str}`` without one. A valid call answers
``"Task completed."``; the call's arguments (unwrapped) are the task's output. An invalid
one answers the validation error, so the model can call it again (google-adk 2.13's tool).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import reactivex as rx
from pydantic import BaseModel, TypeAdapter, ValidationError
from reactivex import Observable

from adk_rx.context import ToolContext
from adk_rx.events import Event
from adk_rx.tools.base import BaseTool

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent

__all__ = ["FINISH_TASK", "FinishTaskTool", "task_output", "task_result"]

FINISH_TASK = "finish_task"
"""The tool's name."""

COMPLETED = "Task completed."
_WRAPPER = "result"


class _DefaultTaskOutput(BaseModel):
    result: str
    """A brief summary of what the agent accomplished."""


def _adapter(agent: LlmAgent) -> TypeAdapter[Any]:
    return TypeAdapter(
        agent.output_schema if agent.output_schema is not None else _DefaultTaskOutput
    )


def _wrapper_key(agent: LlmAgent) -> str | None:
    schema = _adapter(agent).json_schema()
    return None if schema.get("type") == "object" else _WRAPPER


class FinishTaskTool(BaseTool):
    """Ends the task of ``agent`` (a task-mode LlmAgent) with an output."""

    def __init__(self, agent: LlmAgent) -> None:
        self._adapter_value = _adapter(agent)
        self._key = _wrapper_key(agent)
        schema = self._adapter_value.json_schema()
        if self._key is not None:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {self._key: schema}, "required": [self._key]}
            if defs:
                schema["$defs"] = defs
        description = (
            "Signal that this agent has completed its delegated task. Call this when you have "
            "finished your delegated task."
        )
        if agent.output_schema is not None:
            description += " Pass the required output data in the parameters."
        super().__init__(name=FINISH_TASK, description=description, parameters=schema)

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Validates the output; answers ``{"result": "Task completed."}`` or the error."""
        raw = args.get(self._key) if self._key else dict(args)
        try:
            self._adapter_value.validate_python(raw)
        except ValidationError as exc:
            return rx.just(
                {
                    "error": f"Invoking `{FINISH_TASK}()` failed due to validation errors:\n{exc}\n"
                    "You could retry calling this tool, but it is IMPORTANT for you to provide "
                    "all the mandatory parameters with correct types."
                }
            )
        return rx.just({"result": COMPLETED})


def task_result(event: Event) -> bool:
    """True for the response of a ``finish_task`` call that succeeded."""
    return any(
        r.name == FINISH_TASK and (r.response or {}).get("result") == COMPLETED
        for r in event.get_function_responses()
    )


def task_output(agent: LlmAgent, args: Mapping[str, Any]) -> Any:
    """The task's output from the arguments of its successful ``finish_task`` call."""
    key = _wrapper_key(agent)
    return args.get(key) if key is not None and key in args else dict(args)
