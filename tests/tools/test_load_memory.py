"""load_memory: the model searches the user's memory (scenario 71)."""

from __future__ import annotations

import json

from reactivex import operators as ops

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import load_memory
from adk_rx.tools.load_memory import MEMORY_INSTRUCTION
from tests.tool_harness import Harness, call, calls


def test_agent_remembers_the_user_name_from_an_earlier_session() -> None:
    """Scenario 71."""
    llm = ScriptedLlm(
        [
            "Nice to meet you, James.",
            calls(call("load_memory", {"query": "name"})),
            "Your name is James.",
        ]
    )
    harness = Harness(LlmAgent(name="assistant", model=llm, tools=[load_memory]))
    harness.turn("My name is James")
    memory = harness.runner.memory_service
    assert memory is not None
    memory.add_session_to_memory(harness.session()).pipe(ops.to_list()).run()
    harness.new_session("s2")

    events = harness.turn("what is my name?", session_id="s2")

    assert events[-1].text() == "Your name is James."
    last = llm.requests[-1].contents[-1].parts[0].function_response
    assert last is not None and last.name == "load_memory"
    assert "My name is James" in json.dumps(last.response)
    memories = (last.response or {})["memories"]
    assert {m["author"] for m in memories} == {"user"}
    assert all(m["timestamp"] for m in memories)


def test_the_agent_is_told_it_has_memory_and_the_tool_is_declared() -> None:
    llm = ScriptedLlm(["ok"])
    Harness(LlmAgent(name="assistant", model=llm, tools=[load_memory])).turn()

    request = llm.requests[0]
    assert MEMORY_INSTRUCTION in request.system_instruction_text()
    declared = request.function_declarations()
    assert [d.name for d in declared] == ["load_memory"]
    assert declared[0].parameters_json_schema == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what to look up in memory"}},
        "required": ["query"],
    }


def test_a_search_without_matches_returns_no_memories() -> None:
    llm = ScriptedLlm([calls(call("load_memory", {"query": "zebra"})), "nothing"])
    events = Harness(LlmAgent(name="assistant", model=llm, tools=[load_memory])).turn()

    assert events[1].get_function_responses()[0].response == {"memories": []}


def test_without_a_memory_service_the_model_gets_an_error_and_the_run_goes_on() -> None:
    llm = ScriptedLlm([calls(call("load_memory", {"query": "name"})), "sorry"])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="assistant", model=llm, tools=[load_memory]),
        session_service=InMemorySessionService(),
    )
    runner.session_service.create_session(app_name="app", user_id="u1", session_id="s1").run()

    events = list(runner.run(user_id="u1", session_id="s1", new_message="hi"))

    response = events[1].get_function_responses()[0].response or {}
    assert "no memory service" in response["error"]
    assert events[-1].text() == "sorry"


def test_a_query_that_is_not_a_string_is_an_error_response() -> None:
    llm = ScriptedLlm([calls(call("load_memory", {"query": 3})), "ok"])
    events = Harness(LlmAgent(name="assistant", model=llm, tools=[load_memory])).turn()

    response = events[1].get_function_responses()[0].response or {}
    assert "query" in response["error"]
