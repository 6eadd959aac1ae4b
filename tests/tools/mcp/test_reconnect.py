"""An MCP server that dies between or during requests: the next request opens a new session.

Each test runs the demo server as a real subprocess (stdio, or streamable HTTP) and kills
it for real (SIGKILL, or ``os._exit`` inside the server while it handles ``tools/list``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from reactivex import operators as ops

from adk_rx import LlmAgent, Runner
from adk_rx.errors import McpConnectionError
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm
from adk_rx.tools.mcp import McpToolset, StreamableHTTPConnectionParams
from tests.spine_support import USER, call_response, create_session, new_runner, text

from .conftest import SERVER, _free_port, _wait_for_port, stdio_params

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def mark(tmp_path: Path) -> Path:
    """This test's own mark file: the switch files next to it concern this test only."""
    path = tmp_path / "mark.txt"
    path.touch()
    return path


@pytest.fixture
def toolset(mark: Path) -> Any:
    made = McpToolset(connection_params=stdio_params(mark))
    yield made
    made.close()


def _runner(toolset: McpToolset, llm: ScriptedLlm) -> Runner:
    runner = new_runner(LlmAgent(name="assistant", model=llm, tools=[toolset]))
    create_session(runner)
    return runner


def _turn(runner: Runner, message: str) -> list[Event]:
    return (
        runner.run_async(user_id=USER, session_id="s1", new_message=text(message))
        .pipe(ops.to_list())
        .run()
    )


def _answers(events: list[Event]) -> list[dict[str, Any]]:
    return [r.response or {} for e in events for r in e.get_function_responses()]


def _declared(llm: ScriptedLlm, call: int) -> set[str]:
    return {d.name or "" for d in llm.requests[call].function_declarations()}


def test_a_server_killed_between_turns_is_reopened_and_the_next_turn_lists_and_calls(
    toolset: McpToolset,
) -> None:
    llm = ScriptedLlm(
        [call_response("pid", {}, "c1"), "one", call_response("pid", {}, "c2"), "two"]
    )
    runner = _runner(toolset, llm)
    [first] = _answers(_turn(runner, "a"))

    os.kill(first["result"], signal.SIGKILL)
    events = _turn(runner, "b")

    [second] = _answers(events)
    assert second["result"] != first["result"]
    assert {"pid", "add"} <= _declared(llm, 2)
    assert events[-1].text() == "two"
    assert toolset.connection.connects == 2


def test_a_killed_server_is_noticed_without_waiting_for_a_request(toolset: McpToolset) -> None:
    runner = _runner(toolset, ScriptedLlm([call_response("pid", {}, "c1"), "one"]))
    [answer] = _answers(_turn(runner, "a"))
    assert toolset.connection.is_open

    os.kill(answer["result"], signal.SIGKILL)

    # The server's stdout ends: the session is dropped then, not by a request failing on it.
    deadline = time.monotonic() + 20
    while toolset.connection.is_open:
        assert time.monotonic() < deadline, "the dead session was never dropped"
        time.sleep(0.02)


def test_a_server_that_dies_while_listing_its_tools_is_reopened_and_listed_again(
    toolset: McpToolset, mark: Path
) -> None:
    llm = ScriptedLlm([call_response("add", {"a": 2, "b": 3}, "c1"), "five"])
    runner = _runner(toolset, llm)
    Path(f"{mark}.die-on-list").touch()

    events = _turn(runner, "add")

    assert not Path(f"{mark}.die-on-list").exists()  # the first server took the switch
    assert _answers(events) == [{"result": 5}]
    assert toolset.connection.connects == 2


def test_a_server_that_cannot_be_restarted_fails_the_step_with_an_error_naming_it(
    toolset: McpToolset, mark: Path
) -> None:
    llm = ScriptedLlm([call_response("pid", {}, "c1"), "one", "never asked"])
    runner = _runner(toolset, llm)
    [first] = _answers(_turn(runner, "a"))
    Path(f"{mark}.refuse-start").touch()

    os.kill(first["result"], signal.SIGKILL)
    with pytest.raises(McpConnectionError) as raised:
        _turn(runner, "b")

    assert "demo_server.py" in str(raised.value)
    assert len(llm.requests) == 2  # the model was not asked without its tools


def test_an_http_server_restarted_between_turns_gets_a_new_session(mark: Path) -> None:
    port = _free_port()

    def start() -> subprocess.Popen[bytes]:
        command = [sys.executable, SERVER, "http", str(mark), str(port)]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_port(port, server)
        return server

    server = start()
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url=f"http://127.0.0.1:{port}/mcp")
    )
    try:
        llm = ScriptedLlm(
            [call_response("pid", {}, "c1"), "one", call_response("pid", {}, "c2"), "two"]
        )
        runner = _runner(toolset, llm)
        [first] = _answers(_turn(runner, "a"))
        server.kill()
        server.wait(10)
        server = start()  # same URL; it does not know the session of the first one

        [second] = _answers(_turn(runner, "b"))

        assert second["result"] == server.pid != first["result"]
        assert toolset.connection.connects == 2
    finally:
        toolset.close()
        server.kill()
        server.wait(10)
