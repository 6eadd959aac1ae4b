"""The console renderer of ``adk-rx run``."""

from __future__ import annotations

import io

from rich.console import Console

from adk_rx.cli.render import ConsoleRenderer
from adk_rx.events import Event


def test_a_tool_progress_event_is_shown_as_a_dim_line() -> None:
    out = io.StringIO()
    renderer = ConsoleRenderer(console=Console(file=out, width=100, color_system=None))
    renderer.event(
        Event(
            author="fetcher",
            partial=True,
            custom_metadata={
                "tool_progress": {"id": "c1", "name": "download", "progress": {"percent": 60}}
            },
        )
    )
    assert out.getvalue().strip() == '… download: {"percent": 60}'


def _rendered(*events: Event) -> list[str]:
    out = io.StringIO()
    renderer = ConsoleRenderer(console=Console(file=out, width=100, color_system=None))
    for event in events:
        renderer.event(event)
    renderer._end_stream()  # pyright: ignore[reportPrivateUsage] - close a streamed line
    return out.getvalue().rstrip("\n").split("\n")


def _child(event: Event, *, chunk: bool = False) -> Event:
    tag = {"agent_tool": {"call_id": "c1", "agent": event.author, "partial": chunk}}
    return event.replace(partial=True, custom_metadata=tag)


def test_the_events_of_a_streaming_agent_tool_are_indented_under_the_tool_line() -> None:
    from google.genai import types

    call = types.Part(function_call=types.FunctionCall(id="c1", name="helper", args={"q": 1}))
    lookup = types.Part(function_call=types.FunctionCall(id="i1", name="lookup", args={}))
    answer = types.Part(
        function_response=types.FunctionResponse(id="c1", name="helper", response={"result": "ok"})
    )

    def said(author: str, *parts: types.Part, role: str = "model") -> Event:
        return Event(author=author, content=types.Content(role=role, parts=list(parts)))

    lines = _rendered(
        said("outer", call),
        _child(said("helper", lookup)),
        _child(said("helper", types.Part(text="Pa")), chunk=True),
        _child(said("helper", types.Part(text="ris")), chunk=True),
        _child(said("helper", types.Part(text="Paris"))),
        said("outer", answer, role="user"),
    )
    assert lines == [
        "→ outer calls helper(q=1)",
        "    │ → helper calls lookup()",
        "    │ helper: Paris",
        '← helper: {"result": "ok"}',
    ]


def test_a_workflow_node_output_and_route_are_shown() -> None:
    from adk_rx.events import EventActions, NodeInfo

    lines = _rendered(
        Event(author="wf", output={"n": 1}, node_info=NodeInfo(path="wf@1/count@2")),
        Event(author="wf", actions=EventActions(route="done"), node_info=NodeInfo(path="wf@1/a@1")),
    )
    assert lines == ['◆ count: {"n": 1}', "  route done"]


def test_code_the_model_ran_and_its_output_are_shown_as_blocks() -> None:
    from google.genai import types

    code = types.Part.from_executable_code(
        code="x = 6\nprint(x * 7)", language=types.Language.PYTHON
    )
    ok = types.Part.from_code_execution_result(outcome=types.Outcome.OUTCOME_OK, output="42\n")
    failed = types.Part.from_code_execution_result(
        outcome=types.Outcome.OUTCOME_FAILED, output="ZeroDivisionError"
    )
    lines = _rendered(
        Event(author="coder", content=types.Content(role="model", parts=[code, ok])),
        Event(author="coder", content=types.Content(role="model", parts=[failed])),
    )
    assert lines == [
        "⌘ coder runs code:",
        "  │ x = 6",
        "  │ print(x * 7)",
        "← code output:",
        "  │ 42",
        "← code failed:",
        "  │ ZeroDivisionError",
    ]
