"""AgentTool: an agent called like a function, through a Runner (scenario 72)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel
from reactivex import Observable
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.testing import TestScheduler

from adk_rx import (
    AgentTool,
    BasePlugin,
    Event,
    FunctionTool,
    InvocationTimeoutError,
    LlmAgent,
    RunConfig,
    ToolContext,
)
from adk_rx.agent_tool.child_confirmation import WAITING
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import SESSION, USER, Harness, call, calls, responses_in, user_response

CONFIRMATION = "adk_request_confirmation"


def model_parts(*parts: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)))


def _outer(inner: LlmAgent, *script: Any, **tool: Any) -> tuple[Harness, ScriptedLlm]:
    llm = ScriptedLlm(script)
    agent = LlmAgent(name="outer", model=llm, tools=[AgentTool(inner, **tool)])
    return Harness(agent), llm


def test_result_is_the_concatenated_text_of_the_inner_final_response() -> None:
    inner_llm = ScriptedLlm(
        [model_parts(types.Part(text="First text part."), types.Part(text=" Second text part."))]
    )
    inner = LlmAgent(name="helper", model=inner_llm, description="Helps.")
    harness, llm = _outer(inner, calls(call("helper", {"request": "help me"})), "thanks")

    events = harness.turn()

    assert simplify_events(events) == [
        'outer: FunctionCall(helper, {"request": "help me"})',
        'outer: FunctionResponse(helper, {"result": "First text part. Second text part."})',
        "outer: thanks",
    ]
    assert [c.parts[0].text for c in inner_llm.requests[0].contents if c.parts] == ["help me"]
    assert responses_in(llm.requests[1]) == [{"result": "First text part. Second text part."}]


def test_the_inner_flow_runs_its_own_tools_to_a_final_answer_and_is_not_streamed() -> None:
    def lookup(key: str) -> str:
        """Looks a key up."""
        return key.upper()

    inner_llm = ScriptedLlm([calls(call("lookup", {"key": "abc"})), "found ABC"])
    inner = LlmAgent(name="helper", model=inner_llm, tools=[lookup])
    harness, _ = _outer(inner, calls(call("helper", {"request": "find abc"})), "done")

    events = harness.turn()

    assert {e.author for e in events} == {"outer"}
    assert events[1].get_function_responses()[0].response == {"result": "found ABC"}
    assert {e.author for e in harness.session().events} == {"user", "outer"}


def test_thought_parts_are_left_out_of_the_result() -> None:
    inner_llm = ScriptedLlm(
        [model_parts(types.Part(text="hmm, thinking", thought=True), types.Part(text="answer"))]
    )
    harness, _ = _outer(
        LlmAgent(name="helper", model=inner_llm), calls(call("helper", {"request": "q"})), "ok"
    )

    events = harness.turn()

    assert events[1].get_function_responses()[0].response == {"result": "answer"}


def test_an_empty_inner_response_gives_an_empty_result() -> None:
    inner_llm = ScriptedLlm([model_parts()])
    harness, _ = _outer(
        LlmAgent(name="helper", model=inner_llm), calls(call("helper", {"request": "q"})), "ok"
    )

    events = harness.turn()

    assert events[1].get_function_responses()[0].response == {}


class MagicInput(BaseModel):
    is_magic: bool


def test_input_schema_shapes_the_declaration_and_the_request_is_its_json() -> None:
    inner_llm = ScriptedLlm(["magic!"])
    inner = LlmAgent(name="magician", model=inner_llm, input_schema=MagicInput)
    tool = AgentTool(inner)
    harness, _ = _outer(inner, calls(call("magician", {"is_magic": True})), "ok")

    harness.turn()

    schema = tool.declaration().parameters_json_schema
    assert isinstance(schema, dict) and schema["required"] == ["is_magic"]
    assert inner_llm.requests[0].contents[0].parts[0].text == '{"is_magic":true}'


def test_invalid_arguments_for_the_input_schema_become_an_error_response() -> None:
    inner = LlmAgent(name="magician", model=ScriptedLlm([]), input_schema=MagicInput)
    harness, _ = _outer(inner, calls(call("magician", {"is_magic": "perhaps"})), "ok")

    events = harness.turn()

    response = events[1].get_function_responses()[0].response or {}
    assert "is_magic" in response["error"]
    assert events[-1].text() == "ok"


def test_inner_state_writes_reach_the_caller_state_and_response_delta() -> None:
    def remember(fact: str, tool_context: ToolContext) -> str:
        """Remembers a fact."""
        tool_context.state["fact"] = fact
        return "ok"

    inner_llm = ScriptedLlm([calls(call("remember", {"fact": "sky is blue"})), "noted"])
    inner = LlmAgent(
        name="helper",
        model=inner_llm,
        tools=[remember],
        output_key="helper_said",
        instruction="The topic is {topic}.",
    )
    harness, _ = _outer(inner, calls(call("helper", {"request": "remember"})), "done")

    events = harness.turn("go", state_delta={"topic": "weather"})

    assert "The topic is weather." in inner_llm.requests[0].system_instruction_text()
    assert events[1].actions.state_delta == {"fact": "sky is blue", "helper_said": "noted"}
    state = harness.session().state
    assert (state["fact"], state["helper_said"]) == ("sky is blue", "noted")


def test_skip_summarization_makes_the_response_final_and_keeps_the_state() -> None:
    def remember(tool_context: ToolContext) -> str:
        """Remembers."""
        tool_context.state["k"] = "v"
        return "ok"

    inner_llm = ScriptedLlm([calls(call("remember", {})), "inner answer"])
    inner = LlmAgent(name="helper", model=inner_llm, tools=[remember])
    harness, llm = _outer(
        inner, calls(call("helper", {"request": "go"})), "unreachable", skip_summarization=True
    )

    events = harness.turn()

    assert len(events) == 2
    assert events[1].actions.skip_summarization is True
    assert events[1].actions.state_delta == {"k": "v"}
    assert events[1].is_final_response()
    assert len(llm.requests) == 1


def test_agent_tool_takes_the_agent_name_and_description() -> None:
    tool = AgentTool(LlmAgent(name="helper", model=ScriptedLlm(), description="Helps out."))

    assert (tool.name, tool.description) == ("helper", "Helps out.")
    declaration = tool.declaration()
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }


def test_agent_tool_rejects_something_that_is_not_an_agent() -> None:
    from adk_rx import ConfigurationError

    with pytest.raises(ConfigurationError, match="needs an agent"):
        AgentTool("helper")  # type: ignore[arg-type]


# -- a child run of the caller's invocation -------------------------------------------------


class SeenModelCalls(BasePlugin):
    """Records which agents' model calls the plugin saw."""

    def __init__(self) -> None:
        super().__init__(name="seen")
        self.agents: list[str] = []

    def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        self.agents.append(callback_context.agent_name)


def test_the_callers_plugins_see_the_inner_model_calls_unless_excluded() -> None:
    for include, expected in ((True, ["outer", "helper", "outer"]), (False, ["outer", "outer"])):
        seen = SeenModelCalls()
        inner = LlmAgent(name="helper", model=ScriptedLlm(["inner answer"]))
        llm = ScriptedLlm([calls(call("helper", {"request": "x"})), "done"])
        agent = LlmAgent(name="outer", model=llm, tools=[AgentTool(inner, include_plugins=include)])
        Harness(agent, plugins=[seen]).turn()
        assert seen.agents == expected, include


def test_inner_artifacts_are_the_callers_and_in_its_artifact_delta() -> None:
    def draw(tool_context: ToolContext) -> Observable[Any]:
        """Draws a picture."""
        return tool_context.save_artifact("picture.png", types.Part(text="a cat")).pipe(
            ops.map(lambda version: {"saved": version})
        )

    inner = LlmAgent(
        name="artist", model=ScriptedLlm([calls(call("draw", {})), "drawn"]), tools=[draw]
    )
    harness, _ = _outer(inner, calls(call("artist", {"request": "a cat"})), "here it is")
    events = harness.turn()
    assert events[1].actions.artifact_delta == {"picture.png": 0}
    service = harness.runner.artifact_service
    assert service is not None
    loaded = service.load_artifact(
        app_name="app", user_id=USER, session_id=SESSION, filename="picture.png"
    ).run()
    assert loaded.text == "a cat"


def test_the_inner_run_searches_the_callers_memory() -> None:
    def recall(query: str, tool_context: ToolContext) -> Observable[Any]:
        """Searches memory."""
        return tool_context.search_memory(query).pipe(
            ops.map(lambda found: [m.content.parts[0].text for m in found.memories])
        )

    inner = LlmAgent(
        name="rememberer",
        model=ScriptedLlm([calls(call("recall", {"query": "coffee"})), "found it"]),
        tools=[recall],
    )
    harness, _ = _outer(inner, calls(call("rememberer", {"request": "coffee?"})), "ok")
    memory = harness.runner.memory_service
    assert memory is not None
    old = harness.runner.session_service.create_session(app_name="app", user_id=USER).run()
    harness.runner.session_service.append_event(
        old,
        Event(
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="coffee beans")]),
        ),
    ).run()
    memory.add_session_to_memory(
        harness.runner.session_service.get_session(
            app_name="app", user_id=USER, session_id=old.id
        ).run()
    ).run()
    harness.turn()
    inner_llm = inner.canonical_model
    assert isinstance(inner_llm, ScriptedLlm)
    assert responses_in(inner_llm.requests[1]) == [{"result": ["coffee beans"]}]


def test_the_inner_usage_is_added_to_the_callers_function_response_event() -> None:
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=10, candidates_token_count=5, total_token_count=15
    )
    inner_llm = ScriptedLlm(
        [
            LlmResponse(content=calls(call("noop", {})).content, usage_metadata=usage),
            LlmResponse.text("done inside", usage_metadata=usage),
        ]
    )

    def noop() -> str:
        """Does nothing."""
        return "ok"

    inner = LlmAgent(name="helper", model=inner_llm, tools=[noop])
    harness, _ = _outer(inner, calls(call("helper", {"request": "go"})), "done")
    events = harness.turn()
    spent = events[1].usage_metadata
    assert spent is not None
    assert (spent.prompt_token_count, spent.candidates_token_count, spent.total_token_count) == (
        20,
        10,
        30,
    )
    stored_response = harness.session().events[2]
    assert stored_response.usage_metadata == spent


def test_disposing_the_caller_cancels_the_inner_tool() -> None:
    started, disposed = threading.Event(), threading.Event()

    def wait_forever() -> Observable[Any]:
        """Waits."""

        def subscribe(observer: Any, scheduler: Any = None) -> Disposable:
            started.set()
            return Disposable(disposed.set)

        return Observable(subscribe)

    inner = LlmAgent(
        name="waiter", model=ScriptedLlm([calls(call("wait_forever", {}))]), tools=[wait_forever]
    )
    harness, _ = _outer(inner, calls(call("waiter", {"request": "wait"})), "never")
    subscription = harness.runner.run_async(
        user_id=USER, session_id=SESSION, new_message="go"
    ).subscribe(lambda _: None, lambda _: None)
    assert started.wait(10)
    subscription.dispose()
    assert disposed.wait(10)


def test_the_callers_deadline_cancels_the_inner_run_in_virtual_time() -> None:
    started, disposed = threading.Event(), threading.Event()

    def wait_forever() -> Observable[Any]:
        """Waits."""

        def subscribe(observer: Any, scheduler: Any = None) -> Disposable:
            started.set()
            return Disposable(disposed.set)

        return Observable(subscribe)

    clock = TestScheduler()
    inner = LlmAgent(
        name="waiter", model=ScriptedLlm([calls(call("wait_forever", {}))]), tools=[wait_forever]
    )
    llm = ScriptedLlm([calls(call("waiter", {"request": "wait"})), "never"])
    harness = Harness(
        LlmAgent(name="outer", model=llm, tools=[AgentTool(inner)]), timer_scheduler=clock
    )
    errors: list[Exception] = []
    harness.runner.run_async(
        user_id=USER, session_id=SESSION, new_message="go", run_config=RunConfig(timeout=5.0)
    ).subscribe(lambda _: None, errors.append)
    assert started.wait(10)
    clock.advance_to(4.0)
    assert not disposed.is_set()
    clock.advance_to(5.0)
    assert disposed.wait(10)
    assert isinstance(errors[0], InvocationTimeoutError)


def test_a_confirmation_asked_inside_surfaces_on_the_caller_and_the_answer_reaches_the_tool() -> (
    None
):
    refunded: list[str] = []

    def refund(order: str) -> str:
        """Refunds an order."""
        refunded.append(order)
        return f"refunded {order}"

    inner_llm = ScriptedLlm(
        [calls(call("refund", {"order": "7"}, "inner-1")), "waiting for approval", "refund done"]
    )
    inner = LlmAgent(
        name="billing",
        model=inner_llm,
        tools=[FunctionTool(refund, require_confirmation=True)],
    )
    harness, llm = _outer(
        inner, calls(call("billing", {"request": "refund 7"}, "outer-1")), "asked", "all done"
    )

    first = harness.turn("refund order 7")
    [request] = [c for e in first for c in e.get_function_calls() if c.name == CONFIRMATION]
    assert request.args is not None
    assert request.args["originalFunctionCall"]["id"] == "outer-1"
    assert "billing:" in request.args["toolConfirmation"]["hint"]
    assert "refund" in request.args["toolConfirmation"]["hint"]
    assert responses_in(llm.requests[1]) == [{"error": WAITING}]
    assert refunded == []

    second = harness.turn(user_response(request.id or "", CONFIRMATION, {"confirmed": True}))
    assert refunded == ["7"]
    assert simplify_events(second) == [
        'outer: FunctionResponse(billing, {"result": "refund done"})',
        "outer: all done",
    ]
    inner_response = inner_llm.requests[-1].contents[-1].parts[0].function_response
    assert inner_response is not None and inner_response.response == {"result": "refunded 7"}
