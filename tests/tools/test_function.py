"""FunctionTool at run time: coercion, errors, sync/async/Observable calls, results, confirming."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pydantic
import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.scheduler import CurrentThreadScheduler

from adk_rx.context import InvocationContext, ToolContext
from adk_rx.errors import ConfigurationError, RunError
from adk_rx.events import ToolConfirmation
from adk_rx.sessions import InMemorySessionService, Session
from adk_rx.tools.base import BaseTool
from adk_rx.tools.function import (
    REJECTED,
    REQUIRES_CONFIRMATION,
    FunctionTool,
    ToolArgumentsError,
    ToolResultError,
    as_tool,
)
from tests.spine_support import services_of


@dataclasses.dataclass
class _Agent:
    name: str = "helper"


def _tool_context(
    *, confirmation: ToolConfirmation | None = None, **invocation: Any
) -> ToolContext:
    session = Session(id="s1", app_name="app", user_id="u1", state={"seen": 1})
    ctx = InvocationContext(
        session=session,
        agent=_Agent(),  # type: ignore[arg-type]
        services=services_of(InMemorySessionService(), invocation),
        **invocation,
    )
    return ToolContext(ctx, function_call_id="call-1", tool_confirmation=confirmation)


def _run(tool: BaseTool, args: dict[str, Any], ctx: ToolContext | None = None) -> Any:
    return tool.run_async(args=args, tool_context=ctx or _tool_context()).run()


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(pydantic.BaseModel):
    street: str


@dataclasses.dataclass
class Point:
    x: float
    y: float


# --- arguments -------------------------------------------------------------------------


def test_arguments_are_coerced_in_lax_mode() -> None:
    def f(n: int, x: float, s: str, flag: bool, color: Color) -> dict[str, Any]:
        return {"n": n, "x": x, "s": s, "flag": flag, "color": color.value}

    result = _run(FunctionTool(f), {"n": "3", "x": 42, "s": 7, "flag": "true", "color": "red"})

    assert result == {"n": 3, "x": 42.0, "s": "7", "flag": True, "color": "red"}
    assert type(result["x"]) is float


def test_nested_models_and_dataclasses_arrive_as_instances() -> None:
    seen: list[Any] = []

    def f(address: Address, where: Point) -> None:
        seen.extend([address, where])

    _run(FunctionTool(f), {"address": {"street": "Main"}, "where": {"x": 1, "y": "2.5"}})

    assert seen == [Address(street="Main"), Point(1.0, 2.5)]


def test_optional_parameters_can_be_omitted() -> None:
    def f(a: int, b: int | None, c: int = 10) -> list[Any]:
        return [a, b, c]

    assert _run(FunctionTool(f), {"a": 1}) == {"result": [1, None, 10]}


def test_invalid_arguments_name_the_argument_and_the_problem() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ToolArgumentsError) as caught:
        _run(FunctionTool(add), {"a": "three"})

    message = str(caught.value)
    assert isinstance(caught.value, RunError)
    assert "'add'" in message
    assert "argument 'a'" in message
    assert "valid integer" in message
    assert "'three'" in message
    assert "argument 'b': Field required" in message


def test_a_wrong_nested_field_is_located_by_its_path() -> None:
    def f(address: Address) -> None: ...

    with pytest.raises(ToolArgumentsError, match=r"argument 'address\.street'"):
        _run(FunctionTool(f), {"address": {"street": None}})


def test_unknown_arguments_are_ignored_without_star_kwargs_and_passed_with_it() -> None:
    def strict(a: int) -> int:
        return a

    def loose(a: int, **more: Any) -> dict[str, Any]:
        return {"a": a, **more}

    assert _run(FunctionTool(strict), {"a": 1, "b": 2}) == {"result": 1}
    assert _run(FunctionTool(loose), {"a": 1, "b": 2}) == {"a": 1, "b": 2}


# --- tool_context ----------------------------------------------------------------------


def test_tool_context_is_injected_and_state_writes_become_its_delta() -> None:
    def remember(value: str, tool_context: ToolContext) -> dict[str, Any]:
        tool_context.state["last"] = value
        return {"call": tool_context.function_call_id, "seen": tool_context.state["seen"]}

    ctx = _tool_context()

    assert _run(FunctionTool(remember), {"value": "v"}, ctx) == {"call": "call-1", "seen": 1}
    assert ctx.actions.state_delta == {"last": "v"}


def test_a_model_cannot_override_the_injected_tool_context() -> None:
    def f(tool_context: ToolContext) -> bool:
        return isinstance(tool_context, ToolContext)

    assert _run(FunctionTool(f), {"tool_context": "forged"}) == {"result": True}


# --- how the function runs -------------------------------------------------------------


def test_run_async_is_cold() -> None:
    calls: list[int] = []

    def f() -> None:
        calls.append(1)

    running = FunctionTool(f).run_async(args={}, tool_context=_tool_context())
    assert calls == []

    running.run()
    running.run()
    assert calls == [1, 1]


def test_sync_functions_run_off_the_calling_thread() -> None:
    def where() -> str:
        return threading.current_thread().name

    assert _run(FunctionTool(where), {}) != {"result": threading.current_thread().name}


def test_sync_functions_use_the_invocations_io_scheduler() -> None:
    def where() -> str:
        return threading.current_thread().name

    ctx = _tool_context(io_scheduler=CurrentThreadScheduler())

    assert _run(FunctionTool(where), {}, ctx) == {"result": threading.current_thread().name}


def test_blocking_sync_tools_overlap_on_the_pool() -> None:
    barrier = threading.Barrier(3, timeout=5)

    def meet() -> int:
        barrier.wait()  # breaks (and raises) unless all three calls run at once
        time.sleep(0.3)
        return 1

    tools = [FunctionTool(meet) for _ in range(3)]
    ctx = _tool_context()

    started = time.perf_counter()
    results = (
        rx.merge(*(t.run_async(args={}, tool_context=ctx) for t in tools)).pipe(ops.to_list()).run()
    )
    elapsed = time.perf_counter() - started

    assert results == [{"result": 1}] * 3
    assert elapsed < 0.6


def test_coroutine_functions_are_awaited() -> None:
    async def fetch(key: str) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"key": key}

    assert _run(FunctionTool(fetch), {"key": "k"}) == {"key": "k"}


def test_async_generators_answer_with_their_last_item() -> None:
    async def progress(steps: int) -> AsyncIterator[str]:
        for i in range(steps):
            yield f"step {i}"

    assert _run(FunctionTool(progress), {"steps": 3}) == {"result": "step 2"}


def test_disposing_cancels_a_running_coroutine() -> None:
    started, finished = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.set()

    subscription = (
        FunctionTool(forever).run_async(args={}, tool_context=_tool_context()).subscribe()
    )
    assert started.wait(5)
    subscription.dispose()

    assert finished.wait(5)


def test_functions_returning_observables_answer_with_the_last_item() -> None:
    def annotated(n: int) -> Observable[int]:
        return rx.of(n, n + 1)

    def unannotated(n: int):  # type: ignore[no-untyped-def]
        return rx.of(n, n + 2)

    def empty() -> Observable[int]:
        return rx.empty()

    assert _run(FunctionTool(annotated), {"n": 1}) == {"result": 2}
    assert _run(FunctionTool(unannotated), {"n": 1}) == {"result": 3}
    assert _run(FunctionTool(empty), {}) == {}


def test_an_exception_in_the_function_is_signalled_as_is() -> None:
    def boom() -> None:
        raise KeyError("missing thing")

    with pytest.raises(KeyError, match="missing thing"):
        _run(FunctionTool(boom), {})


# --- results ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"temp": 21}, {"temp": 21}),
        (None, {}),
        (True, {"result": True}),
        (42, {"result": 42}),
        ("text", {"result": "text"}),
        ([1, 2], {"result": [1, 2]}),
        (Color.GREEN, {"result": "green"}),
        (Address(street="Main"), {"street": "Main"}),
        (Point(1.0, 2.0), {"x": 1.0, "y": 2.0}),
        ({"where": Point(0.0, 1.0)}, {"where": {"x": 0.0, "y": 1.0}}),
    ],
)
def test_return_values_map_to_response_dicts(value: Any, expected: dict[str, Any]) -> None:
    def f() -> Any:
        return value

    assert _run(FunctionTool(f), {}) == expected


@pytest.mark.parametrize("value", [object(), {"handle": threading.Lock()}, b"\xff\xfe"])
def test_a_result_json_cannot_hold_is_a_clear_error(value: Any) -> None:
    def leak() -> Any:
        return value

    with pytest.raises(ToolResultError, match="tool 'leak' returned a value JSON cannot hold"):
        _run(FunctionTool(leak), {})


# --- confirmation ----------------------------------------------------------------------


def test_a_call_without_confirmation_requests_it_and_does_not_run() -> None:
    calls: list[int] = []

    def transfer(amount: int) -> str:
        calls.append(amount)
        return "sent"

    ctx = _tool_context()

    result = _run(FunctionTool(transfer, require_confirmation=True), {"amount": 5}, ctx)

    assert result == {"error": REQUIRES_CONFIRMATION}
    assert calls == []
    requested = ctx.actions.requested_tool_confirmations["call-1"]
    assert "transfer" in requested.hint
    assert not requested.confirmed


def test_a_rejected_call_does_not_run() -> None:
    def transfer(amount: int) -> str:
        raise AssertionError("must not run")

    ctx = _tool_context(confirmation=ToolConfirmation(confirmed=False))

    assert _run(FunctionTool(transfer, require_confirmation=True), {"amount": 5}, ctx) == {
        "error": REJECTED
    }
    assert ctx.actions.requested_tool_confirmations == {}


def test_a_confirmed_call_runs() -> None:
    def transfer(amount: int) -> str:
        return f"sent {amount}"

    ctx = _tool_context(confirmation=ToolConfirmation(confirmed=True))

    assert _run(FunctionTool(transfer, require_confirmation=True), {"amount": 5}, ctx) == {
        "result": "sent 5"
    }


def test_a_confirmation_policy_decides_per_call_from_the_arguments() -> None:
    def transfer(amount: int) -> str:
        return "sent"

    tool = FunctionTool(transfer, require_confirmation=lambda args: args["amount"] > 100)

    assert _run(tool, {"amount": "50"}) == {"result": "sent"}
    assert _run(tool, {"amount": 500}) == {"error": REQUIRES_CONFIRMATION}


# --- as_tool ---------------------------------------------------------------------------


def test_as_tool_wraps_functions_and_keeps_tools() -> None:
    def f() -> None: ...

    tool = FunctionTool(f)

    assert isinstance(as_tool(f), FunctionTool)
    assert as_tool(f).name == "f"
    assert as_tool(tool) is tool
    with pytest.raises(ConfigurationError):
        as_tool("not a function")  # type: ignore[arg-type]


def _tool_thread(tool: Any) -> int:
    """The thread a tool ran on, in a Runner turn subscribed on this thread."""
    import threading

    from google.genai import types
    from reactivex import operators as rx_ops

    from adk_rx import InMemoryRunner, LlmAgent
    from adk_rx.models import LlmResponse
    from adk_rx.testing import ScriptedLlm

    call = types.FunctionCall(name="where", args={})
    script = [
        LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)])),
        "done",
    ]
    runner = InMemoryRunner(LlmAgent(name="a", model=ScriptedLlm(script), tools=[tool]))
    session = runner.session_service.create_session(app_name="a", user_id="u").run()
    done = threading.Event()
    events: list[Any] = []
    runner.run_async(user_id="u", session_id=session.id, new_message="go").pipe(
        rx_ops.to_list()
    ).subscribe(events.extend, lambda _: done.set(), done.set)
    assert done.wait(10)
    (response,) = events[1].get_function_responses()
    return response.response["thread"]


def where() -> dict[str, int]:
    """Tells which thread runs it."""
    import threading

    return {"thread": threading.get_ident()}


def test_a_sync_tool_runs_on_the_io_pool_by_default() -> None:
    import threading

    assert _tool_thread(FunctionTool(where)) != threading.get_ident()


def test_a_tool_that_never_blocks_runs_inline_on_the_subscribing_thread() -> None:
    import threading

    from adk_rx.tools import never_blocks

    assert _tool_thread(FunctionTool(where, blocking=False)) == threading.get_ident()

    @never_blocks
    def marked() -> dict[str, int]:
        """Tells which thread runs it."""
        return where()

    tool = FunctionTool(marked, name="where")
    assert not tool.blocking
    assert _tool_thread(tool) == threading.get_ident()


def test_only_a_plain_sync_function_can_say_it_never_blocks() -> None:
    async def fetch() -> str:
        """Fetches."""
        return "x"

    with pytest.raises(ConfigurationError, match="blocking=False"):
        FunctionTool(fetch, blocking=False)
