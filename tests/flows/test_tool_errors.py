"""A tool that raises: a short error for the model, the traceback in the log and the event."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adk_rx import LlmAgent, SqlSessionService
from adk_rx.flows.tool_errors import TRACEBACKS_KEY
from adk_rx.testing import ScriptedLlm
from tests.spine_support import (
    USER,
    call_response,
    collect,
    create_session,
    new_runner,
    stored,
    text,
)


def divide(x: int) -> dict[str, float]:
    """Divides one by x."""
    return {"r": 1 / x}


def _run(tmp_path: Path) -> tuple[list, object]:
    llm = ScriptedLlm([call_response("divide", {"x": 0}, call_id="c1"), "sorry"])
    service = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[divide]), session_service=service)
    create_session(runner)
    events = collect(runner.run_async(user_id=USER, session_id="s1", new_message=text("go")))
    return events, runner


def test_the_model_sees_a_short_error_and_the_event_keeps_the_traceback(tmp_path: Path) -> None:
    events, runner = _run(tmp_path)
    response_event = events[1]
    (response,) = response_event.get_function_responses()
    assert response.response == {"error": "ZeroDivisionError: division by zero"}
    traceback = response_event.custom_metadata[TRACEBACKS_KEY]["c1"]
    assert f'File "{__file__}"' in traceback and "in divide" in traceback
    assert traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    stored_event = stored(runner).events[2]  # user message, call, response
    assert stored_event.custom_metadata[TRACEBACKS_KEY]["c1"] == traceback


def test_the_traceback_is_logged_on_the_adk_rx_logger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="adk_rx"):
        events, _ = _run(tmp_path)
    (record,) = [r for r in caplog.records if r.name == "adk_rx.tools"]
    assert "'divide'" in record.getMessage() and "c1" in record.getMessage()
    assert events[0].invocation_id in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError


def test_a_tool_that_succeeds_adds_no_metadata(tmp_path: Path) -> None:
    llm = ScriptedLlm([call_response("divide", {"x": 2}), "half"])
    runner = new_runner(LlmAgent(name="calc", model=llm, tools=[divide]))
    create_session(runner)
    events = collect(runner.run_async(user_id=USER, session_id="s1", new_message=text("go")))
    assert events[1].custom_metadata is None
