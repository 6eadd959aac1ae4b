"""LongRunningFunctionTool: flagged long-running, described as such, None stays None."""

from __future__ import annotations

import dataclasses
from typing import Any

from reactivex import operators as ops

from adk_rx.context import InvocationContext, ToolContext
from adk_rx.services import InvocationServices
from adk_rx.sessions import InMemorySessionService, Session
from adk_rx.tools.function import FunctionTool
from adk_rx.tools.long_running import LONG_RUNNING_NOTE, LongRunningFunctionTool


@dataclasses.dataclass
class _Agent:
    name: str = "helper"


def _tool_context() -> ToolContext:
    ctx = InvocationContext(
        session=Session(id="s1", app_name="app", user_id="u1"),
        agent=_Agent(),  # type: ignore[arg-type]
        services=InvocationServices(session_service=InMemorySessionService()),
    )
    return ToolContext(ctx, function_call_id="call-1")


def _results(tool: FunctionTool, args: dict[str, Any]) -> list[Any]:
    return tool.run_async(args=args, tool_context=_tool_context()).pipe(ops.to_list()).run()


def ask_manager(amount: int) -> None:
    """Asks a manager to approve a reimbursement.

    Args:
        amount: the amount to reimburse.
    """


def start_job(name: str) -> dict[str, str]:
    return {"status": "pending", "job": name}


def test_is_flagged_long_running_unlike_a_function_tool() -> None:
    assert LongRunningFunctionTool(ask_manager).is_long_running
    assert not FunctionTool(ask_manager).is_long_running


def test_description_tells_the_model_the_answer_may_come_later() -> None:
    tool = LongRunningFunctionTool(ask_manager)

    assert tool.description == (
        f"Asks a manager to approve a reimbursement.\n\n{LONG_RUNNING_NOTE}"
    )
    assert tool.declaration().description == tool.description
    assert LongRunningFunctionTool(start_job).description == LONG_RUNNING_NOTE


def test_schema_is_that_of_the_function() -> None:
    schema = LongRunningFunctionTool(ask_manager).declaration().parameters_json_schema

    assert schema == {
        "type": "object",
        "properties": {"amount": {"type": "integer", "description": "the amount to reimburse."}},
        "required": ["amount"],
    }


def test_a_none_result_stays_none_meaning_no_response_yet() -> None:
    assert _results(LongRunningFunctionTool(ask_manager), {"amount": 5}) == [None]
    assert _results(FunctionTool(ask_manager), {"amount": 5}) == [{}]


def test_a_pending_status_is_answered_at_once() -> None:
    assert _results(LongRunningFunctionTool(start_job), {"name": "build"}) == [
        {"status": "pending", "job": "build"}
    ]
