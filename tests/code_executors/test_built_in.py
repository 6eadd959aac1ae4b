"""BuiltInCodeExecutor: Gemini's code execution tool in every request; the model's
executable_code and code_execution_result parts stored and sent back; its images saved as
artifacts; google-adk 2.13 as the oracle for the request and the stored events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.code_executors import BuiltInCodeExecutor as AdkBuiltInCodeExecutor
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.genai import types

from adk_rx import ConfigurationError, InMemoryRunner, LlmAgent
from adk_rx.code_executors import BuiltInCodeExecutor
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from tests.code_executors.test_oracle_google_adk import _sent, _summary

pytestmark = pytest.mark.timeout(60)

GEMINI = "gemini-2.5-flash"
CODE = types.Part.from_executable_code(code="print(3 * 14)", language=types.Language.PYTHON)
RAN = types.Part.from_code_execution_result(outcome=types.Outcome.OUTCOME_OK, output="42\n")
ANSWER = [types.Part(text="Computing."), CODE, RAN, types.Part(text="It is 42.")]


def _model_response(parts: list[types.Part]) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=parts))


def _rx(script: list[list[types.Part]], turns: list[str], model: str = GEMINI) -> Any:
    llm = ScriptedLlm([_model_response(p) for p in script], model=model)
    agent = LlmAgent(name="coder", model=llm, code_executor=BuiltInCodeExecutor())
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = runner.session_service.create_session(app_name="app", user_id="u").run()
    for text in turns:
        list(runner.run(user_id="u", session_id=session.id, new_message=text))
    stored = runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    return runner, session.id, stored.run().events, llm.requests


class _AdkScripted(AdkBaseLlm):
    script: list[Any] = []
    requests: list[Any] = []

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        self.requests.append(llm_request.model_copy(deep=True))
        parts = self.script[len(self.requests) - 1]
        yield AdkLlmResponse(content=types.Content(role="model", parts=parts))


def _adk(script: list[list[types.Part]], turns: list[str]) -> Any:
    llm = _AdkScripted(model=GEMINI, script=script, requests=[])
    agent = AdkLlmAgent(name="coder", model=llm, code_executor=AdkBuiltInCodeExecutor())

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

    return asyncio.run(run()), llm.requests


def _code_tools(request: Any) -> list[Any]:
    return [t.code_execution for t in request.config.tools or [] if t.code_execution is not None]


def test_every_request_declares_the_code_execution_tool_like_google_adk() -> None:
    script, turns = [ANSWER, [types.Part(text="Still 42.")]], ["3*14?", "sure?"]
    adk_events, adk_requests = _adk(script, turns)
    _, _, rx_events, rx_requests = _rx(script, turns)
    assert [len(_code_tools(r)) for r in rx_requests] == [1, 1]
    assert [len(_code_tools(r)) for r in adk_requests] == [1, 1]
    assert [_summary(e.content) for e in rx_events if e.content] == [
        _summary(e.content) for e in adk_events if e.content
    ]
    assert _sent(rx_requests) == _sent(adk_requests)


def test_the_model_parts_are_stored_as_they_came_and_nothing_runs_locally() -> None:
    _, _, events, requests = _rx([ANSWER], ["3*14?"])
    (answer,) = [e for e in events if e.author == "coder"]
    assert answer.content is not None and answer.content.parts == ANSWER
    assert answer.is_final_response() and len(requests) == 1


def test_a_model_that_is_not_gemini_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not supported for model gpt-4o"):
        _rx([ANSWER], ["go"], model="gpt-4o")


def test_the_check_can_be_turned_off_for_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "true")
    _, _, _, requests = _rx([ANSWER], ["go"], model="my-proxy")
    assert len(_code_tools(requests[0])) == 1


@pytest.mark.parametrize(
    "model", ["models/gemini-2.5-pro", "projects/p/locations/l/publishers/g/models/gemini-2.0"]
)
def test_gemini_names_with_a_prefix_are_accepted(model: str) -> None:
    _, _, _, requests = _rx([ANSWER], ["go"], model=model)
    assert len(_code_tools(requests[0])) == 1


def test_an_image_the_code_made_is_saved_as_an_artifact_and_named_in_the_answer() -> None:
    png = types.Part(
        inline_data=types.Blob(data=b"\x89PNG fake", mime_type="image/png", display_name="plot.png")
    )
    runner, session_id, events, _ = _rx([[CODE, RAN, png, types.Part(text="Here.")]], ["plot"])
    (answer,) = [e for e in events if e.author == "coder"]
    assert answer.content is not None
    assert [p.text for p in answer.content.parts or []][2] == "Saved as artifact: plot.png. "
    assert dict(answer.actions.artifact_delta) == {"plot.png": 0}
    saved = runner.artifact_service.load_artifact(
        app_name="app", user_id="u", session_id=session_id, filename="plot.png"
    ).run()
    assert saved.inline_data.data == b"\x89PNG fake"
