"""BaseToolset: tools asked for at every step, filters, prefixes, closing, duplicate names."""

from __future__ import annotations

from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable

from adk_rx import AgentTool, BaseTool, BaseToolset, ConfigurationError, FunctionTool, LlmAgent
from adk_rx.context import ReadonlyContext
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import USER, call_response, collect, create_session, new_runner, turn


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def mul(a: int, b: int) -> int:
    """Multiplies two numbers."""
    return a * b


def neg(a: int) -> int:
    """Negates a number."""
    return -a


class GrowingToolset(BaseToolset):
    """One more tool at every step; remembers what it was asked with."""

    def __init__(self, kind: str = "list", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = kind
        self.asked: list[ReadonlyContext | None] = []
        self.closed = 0
        self.all = [FunctionTool(add), FunctionTool(mul), FunctionTool(neg)]

    def get_tools(self, readonly_context: ReadonlyContext | None = None) -> Any:
        self.asked.append(readonly_context)
        tools = self.all[: len(self.asked)]
        if self.kind == "awaitable":

            async def later() -> list[BaseTool]:
                return tools

            return later()
        if self.kind == "observable":
            return rx.from_iterable(tools)
        return tools

    def close(self) -> None:
        self.closed += 1


def declared(llm: ScriptedLlm, step: int) -> list[str]:
    return [d.name or "" for d in llm.requests[step].function_declarations()]


def run_three_steps(toolset: BaseToolset) -> tuple[ScriptedLlm, list[str]]:
    llm = ScriptedLlm(
        [call_response("add", {"a": 1, "b": 2}), call_response("add", {"a": 3, "b": 4}), "done"]
    )
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[toolset]))
    create_session(runner)
    events = turn(runner, "go")
    return llm, simplify_events(events)


def test_a_toolset_is_asked_at_every_step_so_its_tools_may_change() -> None:
    for kind in ("list", "awaitable", "observable"):
        toolset = GrowingToolset(kind)
        llm, events = run_three_steps(toolset)
        assert [declared(llm, i) for i in range(3)] == [
            ["add"],
            ["add", "mul"],
            ["add", "mul", "neg"],
        ], kind
        assert events[1] == 'calc: FunctionResponse(add, {"result": 3})'
        assert all(isinstance(c, ReadonlyContext) for c in toolset.asked)


def test_tool_filter_takes_names_or_a_predicate() -> None:
    by_name = GrowingToolset(tool_filter=["mul", "neg"])
    llm, _ = run_three_steps(by_name)
    assert declared(llm, 2) == ["mul", "neg"]

    def short_names(tool: BaseTool, ctx: ReadonlyContext) -> bool:
        return tool.name != "mul" and ctx.agent_name == "calc"

    llm, _ = run_three_steps(GrowingToolset(tool_filter=short_names))
    assert declared(llm, 2) == ["add", "neg"]


def test_tool_name_prefix_renames_tools_and_calls_reach_them() -> None:
    llm = ScriptedLlm([call_response("math_add", {"a": 2, "b": 5}), "seven"])
    toolset = GrowingToolset(tool_name_prefix="math", tool_filter=["add"])
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[toolset]))
    create_session(runner)
    events = turn(runner, "go")
    assert declared(llm, 0) == ["math_add"]
    assert simplify_events(events)[1] == 'calc: FunctionResponse(math_add, {"result": 7})'


def test_a_prefixed_tool_keeps_every_attribute_of_the_inner_tool() -> None:
    inner = FunctionTool(add, idempotent=True, timeout=2.5, max_concurrency=3)
    inner.custom_metadata["owner"] = "math"

    class One(BaseToolset):
        def get_tools(self, readonly_context: ReadonlyContext | None = None) -> Any:
            return [inner]

    llm = ScriptedLlm(["ok"])
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[One(tool_name_prefix="m")]))
    create_session(runner)
    turn(runner, "go")
    agent = runner.agent
    assert isinstance(agent, LlmAgent)
    (renamed,) = [t for t in llm.requests[0].tools_dict.values()]
    assert renamed.name == "m_add" and inner.name == "add"
    assert renamed.is_idempotent and renamed.timeout == 2.5 and renamed.max_concurrency == 3
    assert renamed.bulkhead is inner.bulkhead and renamed.custom_metadata == {"owner": "math"}
    assert renamed.description == inner.description


def test_a_tool_name_in_a_tool_and_a_toolset_is_a_configuration_error_at_request_time() -> None:
    llm = ScriptedLlm(["never"])
    agent = LlmAgent(name="calc", model=llm, tools=[add, GrowingToolset()])
    runner = new_runner(agent)
    create_session(runner)
    try:
        turn(runner, "go")
    except ConfigurationError as exc:
        assert "'add'" in str(exc)
    else:
        raise AssertionError("a duplicate tool name must fail the request")
    assert llm.requests == []


def test_runner_close_closes_every_toolset_of_the_tree_once() -> None:
    outer, inner = GrowingToolset(), GrowingToolset()
    helper = LlmAgent(name="helper", model=ScriptedLlm([]), tools=[inner])
    root = LlmAgent(
        name="root", model=ScriptedLlm([]), tools=[outer, AgentTool(helper)], sub_agents=[]
    )
    runner = new_runner(root)
    runner.close()
    assert (outer.closed, inner.closed) == (1, 1)


def test_get_tools_may_return_an_observable_of_lists() -> None:
    class Lists(BaseToolset):
        def get_tools(self, readonly_context: ReadonlyContext | None = None) -> Observable[Any]:
            return rx.of([FunctionTool(add)], [FunctionTool(mul)])

    llm = ScriptedLlm(["ok"])
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[Lists()]))
    create_session(runner)
    turn(runner, "go")
    assert declared(llm, 0) == ["add", "mul"]


def test_a_confirmed_call_of_a_toolset_tool_resumes_with_the_toolsets_tools() -> None:
    ran: list[int] = []

    def wipe(disk: int) -> str:
        """Wipes a disk."""
        ran.append(disk)
        return "wiped"

    class Dangerous(BaseToolset):
        def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
            return [FunctionTool(wipe, require_confirmation=True)]

    llm = ScriptedLlm([call_response("wipe", {"disk": 2}, "c1"), "asked", "done"])
    runner = new_runner(LlmAgent(name="ops", model=llm, tools=[Dangerous()]))
    create_session(runner)
    first = turn(runner, "wipe disk 2")
    [request] = [c for e in first for c in e.get_function_calls() if c.name != "wipe"]
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=request.id, name=request.name, response={"confirmed": True}
                )
            )
        ],
    )
    second = collect(runner.run_async(user_id=USER, session_id="s1", new_message=answer))
    assert ran == [2]
    assert simplify_events(second)[0] == 'ops: FunctionResponse(wipe, {"result": "wiped"})'
