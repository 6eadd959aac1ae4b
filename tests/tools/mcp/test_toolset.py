"""McpToolset against real MCP servers (stdio subprocess and streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from reactivex import operators as ops

from adk_rx import LlmAgent
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm
from adk_rx.tools.mcp import McpToolset
from tests.spine_support import USER, call_response, create_session, new_runner, stored, text

from .conftest import MakeToolset, stdio_params

pytestmark = pytest.mark.timeout(60)


def run_turn(toolset: McpToolset, *script: Any) -> tuple[Any, list[Event]]:
    """One turn of an agent with ``toolset`` whose model follows ``script``."""
    runner = new_runner(
        LlmAgent(name="assistant", model=ScriptedLlm(list(script)), tools=[toolset])
    )
    create_session(runner)
    events = (
        runner.run_async(user_id=USER, session_id="s1", new_message=text("go"))
        .pipe(ops.to_list())
        .run()
    )
    return runner, events


def responses(events: list[Event]) -> list[dict[str, Any]]:
    return [r.response or {} for e in events for r in e.get_function_responses()]


def test_tools_are_listed_with_the_servers_schemas_and_called(make_toolset: MakeToolset) -> None:
    toolset = make_toolset()
    llm = ScriptedLlm([call_response("add", {"a": 2, "b": 3}, "c1"), "five"])
    runner = new_runner(LlmAgent(name="assistant", model=llm, tools=[toolset]))
    create_session(runner)
    events = list(runner.run(user_id=USER, session_id="s1", new_message=text("add")))
    declared = {d.name: d for d in llm.requests[0].function_declarations()}
    assert {"add", "slow", "steps", "refuse", "crash", "pid"} <= set(declared)
    schema = declared["add"].parameters_json_schema
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert declared["add"].description == "Adds two integers."
    assert responses(list(events)) == [{"result": 5}]


def test_one_session_is_opened_lazily_and_reused(make_toolset: MakeToolset) -> None:
    toolset = make_toolset()
    assert toolset.connection.connects == 0
    llm = ScriptedLlm(
        [call_response("pid", {}, "c1"), "one", call_response("pid", {}, "c2"), "two"]
    )
    runner = new_runner(LlmAgent(name="assistant", model=llm, tools=[toolset]))
    create_session(runner)
    first = list(runner.run(user_id=USER, session_id="s1", new_message=text("a")))
    second = list(runner.run(user_id=USER, session_id="s1", new_message=text("b")))
    assert responses(first) == responses(second)
    assert toolset.connection.connects == 1


def test_an_is_error_result_becomes_an_error_for_the_model(make_toolset: MakeToolset) -> None:
    toolset = make_toolset(tool_filter=["refuse"], tool_name_prefix="demo")
    _, events = run_turn(toolset, call_response("demo_refuse", {"reason": "no way"}), "ok")
    [answer] = responses(events)
    assert "no way" in answer["error"] or "refuse" in answer["error"]


def test_a_timeout_answers_an_error_and_the_next_call_reconnects(
    make_toolset: MakeToolset,
) -> None:
    toolset = make_toolset(timeout=1.0)
    _, events = run_turn(
        toolset,
        call_response("slow", {"seconds": 30}, "c1"),
        call_response("add", {"a": 1, "b": 1}, "c2"),
        "done",
    )
    first, second = responses(events)
    assert "timed out" in first["error"]
    assert second == {"result": 2}
    assert toolset.connection.connects == 2


def test_a_server_killed_between_calls_answers_an_error_then_reconnects(mark: Path) -> None:
    toolset = McpToolset(connection_params=stdio_params(mark))
    try:
        _, events = run_turn(
            toolset,
            call_response("pid", {}, "c1"),
            call_response("crash", {}, "c2"),
            call_response("pid", {}, "c3"),
            "done",
        )
        before, crashed, after = responses(events)
        assert "error" in crashed
        assert after["result"] != before["result"]
        assert toolset.connection.connects == 2
    finally:
        toolset.close()


def test_disposing_the_run_cancels_the_call_on_the_server(
    make_toolset: MakeToolset, mark: Path
) -> None:
    toolset = make_toolset()
    tag = f"dispose-{uuid.uuid4().hex}"
    llm = ScriptedLlm([call_response("slow", {"seconds": 30, "tag": tag}, "c1"), "never"])
    runner = new_runner(LlmAgent(name="assistant", model=llm, tools=[toolset]))
    create_session(runner)
    subscription = runner.run_async(
        user_id=USER, session_id="s1", new_message=text("wait")
    ).subscribe(lambda _: None)
    deadline = time.monotonic() + 20
    while f"started {tag}" not in mark.read_text():
        assert time.monotonic() < deadline, "the slow call never started"
        time.sleep(0.02)
    disposed_at = time.time()
    subscription.dispose()
    deadline = time.monotonic() + 5
    while f"cancelled {tag}" not in mark.read_text():
        assert time.monotonic() < deadline, "the server never saw the cancellation"
        time.sleep(0.02)
    line = next(x for x in mark.read_text().splitlines() if x.startswith(f"cancelled {tag}"))
    assert float(line.split()[-1]) - disposed_at < 1.0
    assert [r.response for e in stored(runner).events for r in e.get_function_responses()] == [
        {"error": "cancelled"}
    ]


def test_close_ends_the_session_and_reaps_the_server_process(mark: Path) -> None:
    toolset = McpToolset(connection_params=stdio_params(mark))
    _, events = run_turn(toolset, call_response("pid", {}, "c1"), "done")
    [answer] = responses(events)
    pid = answer["result"]
    assert os.path.exists(f"/proc/{pid}")
    toolset.close()
    assert not os.path.exists(f"/proc/{pid}")  # gone, not a zombie
    assert toolset.connection.connects == 1


def test_runner_close_closes_the_toolset(mark: Path) -> None:
    toolset = McpToolset(connection_params=stdio_params(mark))
    runner, events = run_turn(toolset, call_response("pid", {}, "c1"), "done")
    pid = responses(events)[0]["result"]
    runner.close()
    assert not os.path.exists(f"/proc/{pid}")


def test_progress_notifications_become_partial_events(make_toolset: MakeToolset) -> None:
    toolset = make_toolset()
    runner, events = run_turn(toolset, call_response("steps", {"n": 3}, "c1"), "done")
    progress = [
        e.custom_metadata["tool_progress"]
        for e in events
        if e.partial and e.custom_metadata and "tool_progress" in e.custom_metadata
    ]
    assert [p["progress"] for p in progress] == [
        {"progress": 1.0, "total": 3.0, "message": "step 1"},
        {"progress": 2.0, "total": 3.0, "message": "step 2"},
        {"progress": 3.0, "total": 3.0, "message": "step 3"},
    ]
    assert {p["id"] for p in progress} == {"c1"}
    assert responses(events) == [{"result": "3 steps done"}]
    assert not any(e.partial for e in stored(runner).events)


def test_calls_never_block_a_pool_thread(make_toolset: MakeToolset) -> None:
    toolset = make_toolset()
    seen: list[str] = []
    original = toolset.connection.run

    async def spying(work: Any, **options: Any) -> Any:
        seen.append(threading.current_thread().name)
        return await original(work, **options)

    toolset.connection.run = spying  # type: ignore[method-assign]
    run_turn(toolset, call_response("add", {"a": 1, "b": 2}), "ok")
    assert seen and all("ThreadPool" not in name for name in seen)
