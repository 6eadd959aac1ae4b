"""The code-execution loop against google-adk 2.13's: the same scripted answers through both.

Each case plays one script to an ``LlmAgent(code_executor=UnsafeLocalCodeExecutor())`` in
google-adk and in adk_rx and compares what was stored (texts, code parts, result parts) and what
each model call was sent: the code blocks found with the same delimiters, the same
``code_execution_result`` output sent back, the same stop after ``error_retry_attempts``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.code_executors import UnsafeLocalCodeExecutor as AdkUnsafeLocalCodeExecutor
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.code_executors import UnsafeLocalCodeExecutor
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm

pytestmark = pytest.mark.timeout(120)

Item = str | types.Part | list[str | types.Part]


def _parts(item: Item) -> list[types.Part]:
    items = item if isinstance(item, list) else [item]
    return [types.Part(text=i) if isinstance(i, str) else i for i in items]


class _AdkScripted(AdkBaseLlm):
    script: list[Any] = []
    requests: list[Any] = []
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        self.requests.append(llm_request.model_copy(deep=True))
        item = self.script[self.calls]
        self.calls += 1
        yield AdkLlmResponse(content=types.Content(role="model", parts=_parts(item)))


def _summary(content: types.Content | None) -> tuple[str, ...]:
    out: list[str] = []
    for part in (content.parts or []) if content else []:
        if part.text is not None:
            out.append(f"text {part.text!r}")
        if part.executable_code:
            out.append(f"code {part.executable_code.code!r}")
        if part.code_execution_result:
            result = part.code_execution_result
            out.append(f"result {result.outcome} {result.output!r}")
    return (content.role or "", *out) if content else ()


def _sent(requests: list[Any]) -> list[list[tuple[str, ...]]]:
    return [[_summary(c) for c in request.contents] for request in requests]


def _adk(script: list[Item], turns: list[str], **options: Any) -> tuple[list[Any], list[Any]]:
    model = _AdkScripted(model="scripted", script=script, requests=[])
    executor = AdkUnsafeLocalCodeExecutor(**options)
    agent = AdkLlmAgent(name="coder", model=model, code_executor=executor)

    async def run() -> list[Any]:
        runner = AdkInMemoryRunner(agent=agent, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        for text in turns:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                pass
        stored = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        )
        assert stored is not None
        return stored.events

    events = asyncio.run(run())
    return [_summary(e.content) for e in events if e.content], _sent(model.requests)


def _rx(script: list[Item], turns: list[str], **options: Any) -> tuple[list[Any], list[Any]]:
    model = ScriptedLlm(
        [LlmResponse(content=types.Content(role="model", parts=_parts(i))) for i in script]
    )
    agent = LlmAgent(name="coder", model=model, code_executor=UnsafeLocalCodeExecutor(**options))
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = runner.session_service.create_session(app_name="app", user_id="u").run()
    for text in turns:
        for _ in runner.run(user_id="u", session_id=session.id, new_message=text):
            pass
    stored = runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    events = stored.run().events
    return [_summary(e.content) for e in events if e.content], _sent(model.requests)


def _both(script: list[Item], turns: list[str], **options: Any) -> list[Any]:
    adk_events, adk_sent = _adk(script, turns, **options)
    rx_events, rx_sent = _rx(script, turns, **options)
    assert rx_events == adk_events
    assert rx_sent == adk_sent
    return rx_events


def test_output_of_a_python_block_goes_back_and_the_loop_ends_on_plain_text() -> None:
    events = _both(
        ["Let me see.\n```python\nprint(sum(range(10)))\n```\nIgnored tail", "It is 45."],
        ["sum 0..9?"],
    )
    assert ("model", "result Outcome.OUTCOME_OK 'Code execution result:\\n45\\n\\n'") in events


def test_the_earliest_block_of_either_delimiter_runs_and_the_answer_is_cut_after_it() -> None:
    _both(
        [
            "a\n```python\nprint('py')\n```\nb\n```tool_code\nprint('tc')\n```",
            ["one", "```tool_code\nprint(2)\n```", " two"],
            "done",
        ],
        ["go"],
    )


def test_an_executable_code_part_runs_and_a_run_result_pair_does_not() -> None:
    code = types.Part.from_executable_code(code="print(7)", language=types.Language.PYTHON)
    ran = types.Part.from_code_execution_result(outcome=types.Outcome.OUTCOME_OK, output="7\n")
    _both([[types.Part(text="here"), code], [code, ran, types.Part(text="seen")], "end"], ["x"])


def test_failures_are_retried_then_the_code_stands_as_the_answer() -> None:
    bad = "```python\nraise ValueError('no')\n```"
    events = _both([bad, bad, bad, "never asked"], ["try"], error_retry_attempts=2)
    assert events[-1] == ("model", f"text {bad!r}")


def test_a_success_resets_the_count_of_failures_in_a_row() -> None:
    bad = "```python\nimport sys; sys.exit(3)\n```"
    good = "```python\nprint('ok')\n```"
    _both([bad, good, bad, bad, "stands"], ["try"], error_retry_attempts=2)


def test_failures_are_counted_per_invocation() -> None:
    bad = "```python\n1/0\n```"
    _both([bad, "gave up", bad, "again"], ["first", "second"], error_retry_attempts=1)


def test_a_warning_on_stderr_of_a_successful_run_is_not_a_failure() -> None:
    warn = "```python\nimport sys\nprint('w', file=sys.stderr)\nprint('fine')\n```"
    _both([warn, "done"], ["go"])
