"""McpToolset(tool_timeout=, max_concurrency=) against the demo server: the toolset's deadline
cancels the call on the server (virtual time on the Runner's timer), and its bulkhead runs one
call of a tool at a time."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from google.genai import types
from reactivex import operators as ops
from reactivex.testing import TestScheduler

from adk_rx import LlmAgent
from adk_rx.events import Event
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.spine_support import USER, call_response, create_session, new_runner, text

from .conftest import MakeToolset
from .test_toolset import responses

pytestmark = pytest.mark.timeout(60)


def _wait_for(mark: Path, line: str) -> float:
    deadline = time.monotonic() + 20
    while True:
        for found in mark.read_text().splitlines():
            if found.startswith(line + " "):
                return float(found.split()[-1])
        assert time.monotonic() < deadline, f"the server never wrote {line!r}"
        time.sleep(0.02)


def test_the_toolsets_tool_timeout_cancels_the_call_on_the_server(
    make_toolset: MakeToolset, mark: Path
) -> None:
    toolset = make_toolset(tool_timeout=2.0)
    tag = f"deadline-{uuid.uuid4().hex}"
    clock = TestScheduler()
    llm = ScriptedLlm([call_response("slow", {"seconds": 30, "tag": tag}, "c1"), "moved on"])
    runner = new_runner(
        LlmAgent(name="assistant", model=llm, tools=[toolset]), timer_scheduler=clock
    )
    create_session(runner)
    events: list[Event] = []
    done = threading.Event()
    runner.run_async(user_id=USER, session_id="s1", new_message=text("wait")).pipe(
        ops.finally_action(done.set)
    ).subscribe(events.append)
    _wait_for(mark, f"started {tag}")

    clock.advance_to(2.0)

    _wait_for(mark, f"cancelled {tag}")
    assert done.wait(20)
    assert responses(events) == [{"error": "tool 'slow' timed out after 2 s"}]
    assert events[-1].text() == "moved on"


def test_max_concurrency_runs_one_call_of_a_tool_at_a_time(
    make_toolset: MakeToolset, mark: Path
) -> None:
    toolset = make_toolset(max_concurrency=1)
    tags = [f"one-{uuid.uuid4().hex}", f"two-{uuid.uuid4().hex}"]
    both = LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"c{n}", name="slow", args={"seconds": 0.3, "tag": tag}
                    )
                )
                for n, tag in enumerate(tags)
            ],
        )
    )
    runner = new_runner(
        LlmAgent(name="assistant", model=ScriptedLlm([both, "done"]), tools=[toolset])
    )
    create_session(runner)

    events = (
        runner.run_async(user_id=USER, session_id="s1", new_message=text("go"))
        .pipe(ops.to_list())
        .run()
    )

    assert responses(events) == [{"result": "slept"}, {"result": "slept"}]
    first, second = (_wait_for(mark, f"started {tag}") for tag in tags)
    assert second - first >= 0.29  # the second call started once the first had answered
