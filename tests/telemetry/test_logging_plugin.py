"""LoggingPlugin: structured lines through the standard logging module, no OpenTelemetry."""

from __future__ import annotations

import logging

import pytest
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.models import LlmResponse
from adk_rx.telemetry import LoggingPlugin
from adk_rx.testing import ScriptedLlm
from tests.telemetry.support import turn
from tests.tool_harness import call, calls


def _runner(agent: LlmAgent) -> InMemoryRunner:
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[LoggingPlugin()])
    runner.session_service.create_session(app_name="app", user_id="u1", session_id="s1").run()
    return runner


def _lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [r.adk_rx for r in caplog.records if hasattr(r, "adk_rx")]  # type: ignore[attr-defined]


def test_one_line_each_for_start_model_call_tool_call_and_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def lookup(key: str) -> str:
        """Looks a key up."""
        return key.upper()

    reply = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="done")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=21, candidates_token_count=4
        ),
    )
    llm = ScriptedLlm([calls(call("lookup", {"key": "a"}, call_id="c1")), reply])
    runner = _runner(LlmAgent(name="root", model=llm, tools=[lookup]))

    with caplog.at_level(logging.INFO, logger="adk_rx.telemetry.logging_plugin"):
        events = turn(runner)

    lines = _lines(caplog)
    assert [line["event"] for line in lines] == [
        "invocation_start",
        "model_call",
        "tool_call",
        "model_call",
        "invocation_end",
    ]
    invocation_id = events[0].invocation_id
    assert all(line["invocation_id"] == invocation_id for line in lines)
    start, _, tool, model, end = lines
    assert start["session_id"] == "s1" and start["agent"] == "root"
    assert tool["tool"] == "lookup" and tool["call_id"] == "c1"
    assert isinstance(tool["duration_ms"], float)
    assert model["model"] == "scripted"
    assert (model["input_tokens"], model["output_tokens"]) == (21, 4)
    assert end["outcome"] == "ok" and isinstance(end["duration_ms"], float)
    text = caplog.records[2].getMessage()
    assert text.startswith("adk_rx tool_call invocation_id=") and "tool=lookup" in text


def test_a_failing_tool_logs_a_warning_and_a_failing_run_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> str:
        """Fails."""
        raise RuntimeError("no disk")

    llm = ScriptedLlm([calls(call("broken")), ValueError("model down")])
    runner = _runner(LlmAgent(name="root", model=llm, tools=[broken]))

    with (
        caplog.at_level(logging.INFO, logger="adk_rx.telemetry.logging_plugin"),
        pytest.raises(Exception, match="model down"),
    ):
        turn(runner)

    ours = [r for r in caplog.records if hasattr(r, "adk_rx")]
    by_event = {(r.adk_rx["event"], r.levelno) for r in ours}  # type: ignore[attr-defined]
    assert ("tool_call", logging.WARNING) in by_event
    assert ("model_call", logging.WARNING) in by_event
    assert ("invocation_end", logging.ERROR) in by_event
    tool_lines = [line for line in _lines(caplog) if line["event"] == "tool_call"]
    assert len(tool_lines) == 1 and "no disk" in str(tool_lines[0]["error"])
