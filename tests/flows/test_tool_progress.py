"""Tools that report progress: partial events of the calling agent, never stored."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import LlmAgent, LlmResponse, RunConfig, ToolContext, ToolExecutionMode
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import USER, call_response, create_session, new_runner, stored, text

WAIT = 10.0


def progress_of(events: list[Event]) -> list[Any]:
    return [
        e.custom_metadata["tool_progress"]
        for e in events
        if e.partial and e.custom_metadata and "tool_progress" in e.custom_metadata
    ]


async def download(name: str) -> AsyncIterator[Any]:
    """Downloads a file, telling how far it got."""
    for percent in (10, 60):
        await asyncio.sleep(0)
        yield {"percent": percent}
    yield {"file": name, "bytes": 42}


def count_up(n: int) -> Observable[int]:
    """Counts to n."""
    return rx.range(1, n + 1)


def test_an_async_generator_reports_every_item_before_its_last_as_partial_events() -> None:
    llm = ScriptedLlm([call_response("download", {"name": "a.txt"}, "c1"), "got it"])
    runner = new_runner(LlmAgent(name="fetcher", model=llm, tools=[download]))
    create_session(runner)
    events = (
        runner.run_async(user_id=USER, session_id="s1", new_message=text("fetch"))
        .pipe(ops.to_list())
        .run()
    )
    assert progress_of(events) == [
        {"id": "c1", "name": "download", "progress": {"percent": 10}},
        {"id": "c1", "name": "download", "progress": {"percent": 60}},
    ]
    assert all(e.author == "fetcher" for e in events)
    assert simplify_events([e for e in events if not e.partial]) == [
        'fetcher: FunctionCall(download, {"name": "a.txt"})',
        'fetcher: FunctionResponse(download, {"file": "a.txt", "bytes": 42})',
        "fetcher: got it",
    ]
    assert not any(e.partial for e in stored(runner).events)
    assert len(stored(runner).events) == 4


def test_an_observable_tool_reports_progress_and_answers_with_its_last_item() -> None:
    llm = ScriptedLlm([call_response("count_up", {"n": 3}, "c1"), "three"])
    runner = new_runner(LlmAgent(name="counter", model=llm, tools=[count_up]))
    create_session(runner)
    events = (
        runner.run_async(user_id=USER, session_id="s1", new_message=text("count"))
        .pipe(ops.to_list())
        .run()
    )
    assert [p["progress"] for p in progress_of(events)] == [1, 2]
    response = next(e for e in events if e.get_function_responses())
    assert response.get_function_responses()[0].response == {"result": 3}


def test_report_progress_from_parallel_tools_arrives_before_the_merged_response() -> None:
    both = LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(id="c1", name="download", args={"name": "a"})
                ),
                types.Part(
                    function_call=types.FunctionCall(id="c2", name="count_up", args={"n": 2})
                ),
            ],
        )
    )
    llm = ScriptedLlm([both, "both"])
    runner = new_runner(LlmAgent(name="worker", model=llm, tools=[download, count_up]))
    create_session(runner)
    events = (
        runner.run_async(
            user_id=USER,
            session_id="s1",
            new_message=text("go"),
            run_config=RunConfig(tool_execution_mode=ToolExecutionMode.PARALLEL),
        )
        .pipe(ops.to_list())
        .run()
    )
    by_call = sorted((p["id"], str(p["progress"])) for p in progress_of(events))
    assert by_call == [("c1", "{'percent': 10}"), ("c1", "{'percent': 60}"), ("c2", "1")]
    merged = next(i for i, e in enumerate(events) if e.get_function_responses())
    assert all(i < merged for i, e in enumerate(events) if e.partial)


def test_disposing_during_a_reporting_tool_cancels_it() -> None:
    reported = threading.Event()
    cancelled = threading.Event()

    async def watch(tool_context: ToolContext) -> AsyncIterator[str]:
        """Watches forever."""
        try:
            yield "started"
            yield "still going"
            await asyncio.Event().wait()
            yield "never"
        except asyncio.CancelledError:
            cancelled.set()
            raise

    llm = ScriptedLlm([call_response("watch", {}, "c1"), "unused"])
    runner = new_runner(LlmAgent(name="watcher", model=llm, tools=[watch]))
    create_session(runner)
    seen: list[Event] = []

    def on_next(event: Event) -> None:
        seen.append(event)
        if progress_of([event]):
            reported.set()

    subscription = runner.run_async(
        user_id=USER, session_id="s1", new_message=text("watch")
    ).subscribe(on_next)
    assert reported.wait(WAIT)
    subscription.dispose()
    assert cancelled.wait(WAIT)
    assert progress_of(seen)[0]["progress"] == "started"
    assert len(llm.requests) == 1
