"""Function calls through a Runner: responses, execution modes, callbacks, recoverable errors."""

from __future__ import annotations

import datetime
import threading
import time
from typing import Any

import pytest
import reactivex as rx
from google.genai import types

from adk_rx import (
    BaseTool,
    FunctionTool,
    LlmAgent,
    LlmCallsLimitExceededError,
    RunConfig,
    StreamingMode,
    ToolContext,
    ToolExecutionMode,
)
from adk_rx.plugins import BasePlugin
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import Harness, call, calls, responses_in


def echo(message: str, tool_context: ToolContext) -> dict[str, Any]:
    """Echoes its arguments."""
    return {"echo": message}


def echo_args(arg1: str = "", arg2: str = "") -> dict[str, Any]:
    """Echoes both arguments."""
    return {"arg1": arg1, "arg2": arg2}


def boom(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"boom {x}")


# -- the function-call turn (scenarios 21-26) -----------------------------------------------


def test_a_call_is_answered_and_the_model_is_called_again_with_the_response() -> None:
    """Scenario 22."""
    llm = ScriptedLlm([calls("thinking", call("echo", {"message": "hi"})), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[echo]))

    events = harness.turn()

    assert simplify_events(events) == [
        'root: [thinking, FunctionCall(echo, {"message": "hi"})]',
        'root: FunctionResponse(echo, {"echo": "hi"})',
        "root: done",
    ]
    assert len(llm.requests) == 2
    assert responses_in(llm.requests[1]) == [{"echo": "hi"}]
    call_id = events[0].get_function_calls()[0].id
    assert call_id and events[1].get_function_responses()[0].id == call_id


def test_max_steps_stops_the_agent_after_that_many_model_calls() -> None:
    """Scenario 21."""
    llm = ScriptedLlm(
        [
            calls("one", call("echo", {"message": "1"})),
            calls("two", call("echo", {"message": "2"})),
            "unreachable",
        ]
    )
    harness = Harness(LlmAgent(name="root", model=llm, tools=[echo], max_steps=2))

    events = harness.turn()

    assert [e.get_function_calls() != [] for e in events] == [True, False, True, False]
    assert [e.get_function_responses() != [] for e in events] == [False, True, False, True]
    assert len(llm.requests) == 2
    assert llm.remaining == 1


def test_a_partial_function_call_is_shown_but_not_executed() -> None:
    """Scenario 24."""
    ran: list[str] = []

    def tool(x: int) -> int:
        """Records the call."""
        ran.append("tool")
        return x

    llm = ScriptedLlm([[calls(call("tool", {"x": 1}, "c1"), partial=True), calls("done")]])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[tool]))

    events = harness.turn(run_config=RunConfig(streaming_mode=StreamingMode.SSE))

    assert simplify_events(events) == ['root: FunctionCall(tool, {"x": 1})', "root: done"]
    assert events[0].partial is True
    assert ran == []
    assert [e.content.role for e in harness.session().events[1:] if e.content] == ["model"]


def test_streamed_parallel_calls_run_each_tool_exactly_once() -> None:
    """Scenario 25."""
    ran: list[str] = []

    def get_temperature(city: str) -> str:
        """The temperature."""
        ran.append("temperature")
        return "20C"

    def get_condition(city: str) -> str:
        """The weather condition."""
        ran.append("condition")
        return "sunny"

    temperature = call("get_temperature", {"city": "Oslo"}, "adk-temperature-id")
    condition = call("get_condition", {"city": "Oslo"}, "adk-condition-id")
    llm = ScriptedLlm(
        [
            [
                calls(temperature, partial=True),
                calls(condition, partial=True),
                calls(temperature, condition),
            ],
            "done",
        ]
    )
    agent = LlmAgent(name="root", model=llm, tools=[get_temperature, get_condition])

    events = Harness(agent).turn(run_config=RunConfig(streaming_mode=StreamingMode.SSE))

    assert [bool(e.partial) for e in events] == [True, True, False, False, False]
    assert [c.id for c in events[2].get_function_calls()] == [
        "adk-temperature-id",
        "adk-condition-id",
    ]
    assert sorted(ran) == ["condition", "temperature"]
    responses = [r for e in events for r in e.get_function_responses()]
    assert [(r.id, r.response) for r in responses] == [
        ("adk-temperature-id", {"result": "20C"}),
        ("adk-condition-id", {"result": "sunny"}),
    ]


def test_streamed_call_arguments_run_the_tool_once_with_the_final_arguments() -> None:
    """Scenario 26: nameless partial chunks, then the aggregated call with the same id."""
    seen: list[dict[str, str]] = []

    def book(origin: str, destination: str) -> str:
        """Books a trip."""
        seen.append({"origin": origin, "destination": destination})
        return "booked"

    chunk = types.Part(function_call=types.FunctionCall(id="trip-1", args={"origin": "Krakow"}))
    full = call("book", {"origin": "Krakow", "destination": "Warsaw"}, "trip-1")
    llm = ScriptedLlm([[calls(chunk, partial=True), calls(full)], "ok"])

    events = Harness(LlmAgent(name="root", model=llm, tools=[book])).turn(
        run_config=RunConfig(streaming_mode=StreamingMode.SSE)
    )

    assert seen == [{"origin": "Krakow", "destination": "Warsaw"}]
    assert events[0].partial and events[0].get_function_calls()[0].id == "trip-1"
    assert events[1].get_function_calls()[0].id == "trip-1"
    assert events[-1].text() == "ok"


# -- one merged response event --------------------------------------------------------------


def test_calls_of_one_response_give_one_event_in_call_order_with_merged_actions() -> None:
    second_done = threading.Event()

    def first(tool_context: ToolContext) -> str:
        """Finishes after the second one."""
        second_done.wait(5)
        tool_context.state["profile"] = {"name": "Ada"}
        tool_context.actions.transfer_to_agent = None
        return "first"

    def second(tool_context: ToolContext) -> str:
        """Finishes first."""
        tool_context.state["profile"] = {"city": "Paris"}
        tool_context.state["seen"] = True
        second_done.set()
        return "second"

    llm = ScriptedLlm([calls(call("first", {}, "a"), call("second", {}, "b")), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[first, second]))

    events = harness.turn()

    assert len(events) == 3
    merged = events[1]
    assert [(r.id, r.response) for r in merged.get_function_responses()] == [
        ("a", {"result": "first"}),
        ("b", {"result": "second"}),
    ]
    assert merged.actions.state_delta == {"profile": {"name": "Ada", "city": "Paris"}, "seen": True}
    assert harness.session().state["profile"] == {"name": "Ada", "city": "Paris"}


# -- execution modes ------------------------------------------------------------------------


def _three_blocking_tools() -> list[Any]:
    def make(name: str) -> Any:
        def tool() -> str:
            time.sleep(0.3)  # the blocking work under test
            return name

        tool.__name__ = name
        tool.__doc__ = f"Blocks for 0.3 s and answers {name}."
        return tool

    return [make("slow_a"), make("slow_b"), make("slow_c")]


def _timed_turn(mode: ToolExecutionMode) -> tuple[float, list[str]]:
    tools = _three_blocking_tools()
    llm = ScriptedLlm([calls(*(call(t.__name__, {}) for t in tools)), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=tools))
    start = time.perf_counter()
    events = harness.turn(run_config=RunConfig(tool_execution_mode=mode))
    elapsed = time.perf_counter() - start
    return elapsed, [str(r.response) for r in events[1].get_function_responses()]


@pytest.mark.parametrize("mode", [ToolExecutionMode.PARALLEL, ToolExecutionMode.NONE])
def test_parallel_and_default_modes_overlap_blocking_tools(mode: ToolExecutionMode) -> None:
    elapsed, results = _timed_turn(mode)

    assert elapsed < 0.75
    assert results == [str({"result": n}) for n in ("slow_a", "slow_b", "slow_c")]


def test_sequential_mode_runs_blocking_tools_one_after_another() -> None:
    elapsed, results = _timed_turn(ToolExecutionMode.SEQUENTIAL)

    assert elapsed >= 0.9
    assert results == [str({"result": n}) for n in ("slow_a", "slow_b", "slow_c")]


def test_sequential_mode_starts_a_call_only_after_the_previous_one_finished() -> None:
    log: list[str] = []

    def step(n: int) -> int:
        """Logs start and end."""
        log.append(f"start {n}")
        log.append(f"end {n}")
        return n

    llm = ScriptedLlm([calls(call("step", {"n": 1}), call("step", {"n": 2})), "done"])
    Harness(LlmAgent(name="root", model=llm, tools=[step])).turn(
        run_config=RunConfig(tool_execution_mode=ToolExecutionMode.SEQUENTIAL)
    )

    assert log == ["start 1", "end 1", "start 2", "end 2"]


# -- callbacks (scenarios 36-39) ------------------------------------------------------------


class _ToolPlugin(BasePlugin):
    def __init__(self, *, before: Any = None, after: Any = None, on_error: Any = None) -> None:
        super().__init__(name="tool_plugin")
        self.before, self.after, self.on_error = before, after, on_error
        self.calls: list[str] = []

    def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> Any:
        self.calls.append("before")
        return self.before(tool_args) if self.before else None

    def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> Any:
        self.calls.append("after")
        return self.after(result) if self.after else None

    def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> Any:
        self.calls.append("on_error")
        return self.on_error(error) if self.on_error else None


def test_chained_tool_callbacks_write_state_and_the_last_after_callback_wins() -> None:
    """Scenario 36."""
    order: list[str] = []

    def bc1(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> None:
        order.append("bc1")

    def bc2(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> None:
        order.append("bc2")
        tc.state["bc2_key"] = "written"

    def ac1(tool: BaseTool, args: dict[str, Any], tc: ToolContext, response: Any) -> None:
        order.append("ac1")

    def ac2(tool: BaseTool, args: dict[str, Any], tc: ToolContext, response: Any) -> Any:
        order.append("ac2")
        return {"from": "ac2"}

    def ac3(tool: BaseTool, args: dict[str, Any], tc: ToolContext, response: Any) -> Any:
        order.append("ac3")
        return {"from": "ac3"}

    llm = ScriptedLlm([calls(call("echo_args", {"arg1": "x"})), "done"])
    agent = LlmAgent(
        name="root",
        model=llm,
        tools=[echo_args],
        before_tool_callback=[bc1, bc2],
        after_tool_callback=[ac1, ac2, ac3],
    )
    harness = Harness(agent)

    events = harness.turn()

    assert events[1].get_function_responses()[0].response == {"from": "ac2"}
    assert order == ["bc1", "bc2", "ac1", "ac2"]
    assert events[1].actions.state_delta == {"bc2_key": "written"}
    assert harness.session().state["bc2_key"] == "written"


def test_argument_edits_by_plugin_and_callbacks_reach_later_callbacks_and_the_tool() -> None:
    """Scenario 37."""
    seen: list[dict[str, Any]] = []

    def plugin_edit(args: dict[str, Any]) -> None:
        args["arg1"] = "from plugin"

    def agent_edit(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> None:
        seen.append(dict(args))
        args["arg2"] = "from callback"

    plugin = _ToolPlugin(before=plugin_edit)
    llm = ScriptedLlm([calls(call("echo_args", {"arg1": "model", "arg2": "model"})), "done"])
    agent = LlmAgent(name="root", model=llm, tools=[echo_args], before_tool_callback=agent_edit)

    events = Harness(agent, plugins=[plugin]).turn()

    assert seen == [{"arg1": "from plugin", "arg2": "model"}]
    assert events[1].get_function_responses()[0].response == {
        "arg1": "from plugin",
        "arg2": "from callback",
    }
    assert events[0].get_function_calls()[0].args == {"arg1": "model", "arg2": "model"}


def test_a_before_callback_result_replaces_a_tool_that_would_fail() -> None:
    """Scenario 37: the short-circuit result is used; the tool never runs."""

    def edit(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> None:
        args["x"] = 2

    def answer(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> Any:
        return {"short_circuit": args["x"]}

    llm = ScriptedLlm([calls(call("boom", {"x": 1})), "done"])
    agent = LlmAgent(name="root", model=llm, tools=[boom], before_tool_callback=[edit, answer])

    events = Harness(agent).turn()

    assert events[1].get_function_responses()[0].response == {"short_circuit": 2}


def test_after_callbacks_also_run_after_a_before_callback_short_circuit() -> None:
    seen: list[Any] = []

    def before(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> Any:
        return {"from": "before"}

    def after(tool: BaseTool, args: dict[str, Any], tc: ToolContext, response: Any) -> Any:
        seen.append(response)
        return {"from": "after", "saw": response["from"]}

    llm = ScriptedLlm([calls(call("echo_args", {})), "done"])
    agent = LlmAgent(
        name="root",
        model=llm,
        tools=[echo_args],
        before_tool_callback=before,
        after_tool_callback=after,
    )

    events = Harness(agent).turn()

    assert seen == [{"from": "before"}]
    assert events[1].get_function_responses()[0].response == {"from": "after", "saw": "before"}


def test_tool_callbacks_see_the_model_args_and_the_tool_result() -> None:
    """Scenario 38."""
    seen: dict[str, Any] = {}

    def before(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> None:
        seen["before"] = (tool.name, dict(args), tc.function_call_id)

    def after(tool: BaseTool, args: dict[str, Any], tc: ToolContext, response: Any) -> Any:
        seen["after"] = response
        return {"replaced": True}

    llm = ScriptedLlm([calls(call("echo_args", {"arg1": "a"}, "id-1")), "hi there"])
    agent = LlmAgent(
        name="root",
        model=llm,
        tools=[echo_args],
        before_tool_callback=before,
        after_tool_callback=after,
    )

    events = Harness(agent).turn()

    assert simplify_events(events) == [
        'root: FunctionCall(echo_args, {"arg1": "a"})',
        'root: FunctionResponse(echo_args, {"replaced": true})',
        "root: hi there",
    ]
    assert seen == {
        "before": ("echo_args", {"arg1": "a"}, "id-1"),
        "after": {"arg1": "a", "arg2": ""},
    }
    assert len(llm.requests) == 2


def test_plugin_tool_hooks_run_first_and_a_plugin_result_skips_the_agent_callbacks() -> None:
    agent_calls: list[str] = []

    def agent_before(tool: BaseTool, args: dict[str, Any], tc: ToolContext) -> Any:
        agent_calls.append("before")
        return {"from": "agent"}

    def agent_after(tool: BaseTool, args: dict[str, Any], tc: ToolContext, r: Any) -> Any:
        agent_calls.append("after")
        return None

    plugin = _ToolPlugin(before=lambda args: {"from": "plugin"})
    llm = ScriptedLlm([calls(call("echo_args", {})), "done"])
    agent = LlmAgent(
        name="root",
        model=llm,
        tools=[echo_args],
        before_tool_callback=agent_before,
        after_tool_callback=agent_after,
    )

    events = Harness(agent, plugins=[plugin]).turn()

    assert events[1].get_function_responses()[0].response == {"from": "plugin"}
    assert plugin.calls == ["before", "after"]
    assert agent_calls == ["after"]


def test_on_tool_error_callback_result_becomes_the_response() -> None:
    """Scenario 39."""
    errors: list[Exception] = []

    def recover(tool: BaseTool, args: dict[str, Any], tc: ToolContext, error: Exception) -> Any:
        errors.append(error)
        return {"recovered": str(error)}

    llm = ScriptedLlm([calls(call("boom", {"x": 7})), "done"])
    agent = LlmAgent(name="root", model=llm, tools=[boom], on_tool_error_callback=recover)

    events = Harness(agent).turn()

    assert [type(e) for e in errors] == [RuntimeError]
    assert events[1].get_function_responses()[0].response == {"recovered": "boom 7"}
    assert events[2].text() == "done"


def test_plugin_on_tool_error_wins_over_the_agent_callback() -> None:
    """Scenario 39."""
    agent_calls: list[str] = []

    def agent_recover(tool: BaseTool, args: dict[str, Any], tc: ToolContext, e: Exception) -> Any:
        agent_calls.append("agent")
        return {"from": "agent"}

    plugin = _ToolPlugin(on_error=lambda error: {"from": "plugin"})
    llm = ScriptedLlm([calls(call("boom", {"x": 1})), "done"])
    agent = LlmAgent(name="root", model=llm, tools=[boom], on_tool_error_callback=agent_recover)

    events = Harness(agent, plugins=[plugin]).turn()

    assert events[1].get_function_responses()[0].response == {"from": "plugin"}
    assert agent_calls == []


# -- errors the model can recover from ------------------------------------------------------


class _Unserialisable(BaseTool):
    def __init__(self) -> None:
        super().__init__(name="weird", description="Returns a set.")

    def declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description)

    def run_async(self, *, args: Any, tool_context: ToolContext) -> Any:
        return rx.just({"values": {1, 2}, "when": object()})


def unjsonable() -> object:
    """Returns something JSON cannot hold."""
    return object()


@pytest.mark.parametrize(
    ("model_call", "expected"),
    [
        (call("missing_tool", {}), ["missing_tool", "does not exist", "boom"]),
        (call("boom", {"x": "not a number"}), ["x"]),
        (call("boom", {}), ["x"]),
        (call("boom", {"x": 3}), ["boom 3"]),
        (call("unjsonable", {}), ["JSON"]),
        (call("weird", {}), ["JSON"]),
    ],
    ids=["unknown-tool", "wrong-type", "missing-arg", "tool-raises", "not-json", "not-json-base"],
)
def test_recoverable_errors_become_error_responses_the_next_request_contains(
    model_call: types.Part, expected: list[str]
) -> None:
    errors: list[str] = []

    def observe(tool: BaseTool, args: dict[str, Any], tc: ToolContext, error: Exception) -> None:
        errors.append(tool.name)

    llm = ScriptedLlm([calls(model_call), "recovered"])
    agent = LlmAgent(
        name="root",
        model=llm,
        tools=[boom, unjsonable, _Unserialisable()],
        on_tool_error_callback=observe,
    )
    harness = Harness(agent)

    events = harness.turn()

    assert events[-1].text() == "recovered"
    response = events[1].get_function_responses()[0].response
    assert response is not None and list(response) == ["error"]
    for fragment in expected:
        assert fragment in response["error"]
    assert responses_in(llm.requests[1]) == [response]
    if model_call.function_call and model_call.function_call.name != "missing_tool":
        assert errors == [model_call.function_call.name]
    assert harness.session().events[-1].text() == "recovered"


def test_max_llm_calls_errors_the_run_with_llm_calls_limit_exceeded() -> None:
    llm = ScriptedLlm([calls(call("echo", {"message": str(n)})) for n in range(5)])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[echo]))

    with pytest.raises(LlmCallsLimitExceededError, match="2"):
        harness.turn(run_config=RunConfig(max_llm_calls=2))

    assert len(llm.requests) == 2


# -- ToolContext: state and artifacts -------------------------------------------------------


def test_tool_state_writes_ride_on_the_response_event_delta() -> None:
    def remember(color: str, tool_context: ToolContext) -> str:
        """Remembers a color."""
        tool_context.state["color"] = color
        tool_context.state["user:favorite"] = color
        return "ok"

    llm = ScriptedLlm([calls(call("remember", {"color": "blue"})), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[remember]))

    events = harness.turn()

    assert events[0].actions.state_delta == {}
    assert events[1].actions.state_delta == {"color": "blue", "user:favorite": "blue"}
    assert harness.session().state["color"] == "blue"
    assert harness.session().state["user:favorite"] == "blue"


def test_artifacts_saved_by_a_tool_are_recorded_in_the_artifact_delta() -> None:
    def write_report(text: str, tool_context: ToolContext) -> dict[str, Any]:
        """Saves a report twice."""
        first = tool_context.save_artifact("report.txt", types.Part(text="draft")).run()
        second = tool_context.save_artifact("report.txt", types.Part(text=text)).run()
        return {"versions": [first, second], "listed": tool_context.list_artifacts().run()}

    llm = ScriptedLlm([calls(call("write_report", {"text": "final"})), "done"])
    harness = Harness(LlmAgent(name="root", model=llm, tools=[write_report]))

    events = harness.turn()

    assert events[1].get_function_responses()[0].response == {
        "versions": [0, 1],
        "listed": ["report.txt"],
    }
    assert events[1].actions.artifact_delta == {"report.txt": 1}
    stored = harness.runner.artifact_service
    assert stored is not None
    loaded = stored.load_artifact(
        app_name="app", user_id="u1", session_id="s1", filename="report.txt"
    ).run()
    assert loaded.text == "final"


def test_end_invocation_set_by_a_tool_stops_the_flow_after_its_response() -> None:
    """Scenario 51."""

    def end_invocation(tool_context: ToolContext) -> None:
        """Ends the invocation."""
        tool_context.invocation_context.end_invocation = True

    llm = ScriptedLlm([calls(call("end_invocation", {})), "unreachable"])
    events = Harness(LlmAgent(name="root", model=llm, tools=[end_invocation])).turn()

    assert simplify_events(events) == [
        "root: FunctionCall(end_invocation, {})",
        "root: FunctionResponse(end_invocation, {})",
    ]
    assert len(llm.requests) == 1


class _DatedTool(FunctionTool):
    """A FunctionTool whose subclass makes its own answer, one JSON cannot hold as it is."""

    def _to_response(self, value: Any) -> dict[str, Any] | None:
        return {"on": datetime.date(2026, 1, value)}


def test_an_answer_a_function_tools_subclass_makes_is_converted_to_json() -> None:
    def day(n: int) -> int:
        """The day."""
        return n

    for blocking in (True, False):
        llm = ScriptedLlm([calls(call("day", {"n": 2})), "done"])
        tool = _DatedTool(day, blocking=blocking)
        harness = Harness(LlmAgent(name="root", model=llm, tools=[tool]))
        harness.turn()
        assert responses_in(llm.requests[1]) == [{"on": "2026-01-02"}]


class _Wrapper(BaseTool):
    """A tool that forwards its calls to another tool, and nothing else."""

    def __init__(self, inner: BaseTool) -> None:
        super().__init__(name=inner.name)
        self.inner = inner

    def run_async(self, *, args: Any, tool_context: ToolContext) -> rx.Observable[Any]:
        return self.inner.run_async(args=args, tool_context=tool_context)


class _Kept(BaseTool):
    """A tool that answers with a dict of its own (the same object on every call)."""

    def __init__(self) -> None:
        super().__init__(name="kept")
        self.answer: dict[str, Any] = {"count": 1, "ratio": 0.5, "name": "k", "none": None}

    def run_async(self, *, args: Any, tool_context: ToolContext) -> rx.Observable[Any]:
        return rx.just(self.answer)


def test_a_wrapper_tools_answer_is_converted_to_json_without_forwarding_anything() -> None:
    def day(n: int) -> int:
        """The day."""
        return n

    for blocking in (True, False):
        llm = ScriptedLlm([calls(call("day", {"n": 3})), "done"])
        tool = _Wrapper(_DatedTool(day, blocking=blocking))
        harness = Harness(LlmAgent(name="root", model=llm, tools=[tool]))
        harness.turn()
        assert responses_in(llm.requests[1]) == [{"on": "2026-01-03"}]


def test_a_dict_of_plain_values_is_the_response_as_a_copy_of_the_tools_own() -> None:
    tool = _Kept()
    llm = ScriptedLlm([calls(call("kept", {})), "done"])
    events = Harness(LlmAgent(name="root", model=llm, tools=[tool])).turn()

    response = events[1].get_function_responses()[0].response
    assert response == tool.answer
    assert response is not tool.answer
    tool.answer["count"] = 2
    assert responses_in(llm.requests[1]) == [{"count": 1, "ratio": 0.5, "name": "k", "none": None}]
