"""max_llm_calls against google-adk 2.13: the same model calls are made, the same error class
ends the run, and the same calls and answers are stored before the stop; adk_rx then adds its
BUDGET_EXCEEDED record (google-adk stores nothing about the stop)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.agents.run_config import RunConfig as AdkRunConfig
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, LlmCallsLimitExceededError, RunConfig
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm

pytestmark = pytest.mark.timeout(60)


def lookup(city: str) -> str:
    """Looks a city up."""
    return f"{city}: sunny"


def _call(n: int) -> types.Content:
    call = types.FunctionCall(id=f"c{n}", name="lookup", args={"city": str(n)})
    return types.Content(role="model", parts=[types.Part(function_call=call)])


class _AdkLooping(AdkBaseLlm):
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        self.calls += 1
        yield AdkLlmResponse(content=_call(self.calls))


def _summary(events: list[Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for event in events:
        for part in (event.content.parts or []) if event.content else []:
            if part.function_call:
                out.append(("call", str(part.function_call.args)))
            if part.function_response:
                out.append(("answer", str(part.function_response.response)))
    return out


def _google_adk(limit: int) -> tuple[int, str, list[tuple[str, str]]]:
    async def run() -> tuple[int, str, list[tuple[str, str]]]:
        model = _AdkLooping(model="looping")
        runner = AdkInMemoryRunner(
            agent=AdkLlmAgent(name="root", model=model, tools=[lookup]), app_name="app"
        )
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        error = ""
        try:
            async for _ in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="go")]),
                run_config=AdkRunConfig(max_llm_calls=limit),
            ):
                pass
        except Exception as exc:
            error = type(exc).__name__
        stored = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        )
        assert stored is not None
        return model.calls, error, _summary(stored.events)

    return asyncio.run(run())


def _adk_rx(limit: int) -> tuple[int, str, list[tuple[str, str]], Any]:
    model = ScriptedLlm([LlmResponse(content=_call(n)) for n in range(1, 10)])
    runner = InMemoryRunner(agent=LlmAgent(name="root", model=model, tools=[lookup]))
    error = ""
    try:
        list(
            runner.run(
                user_id="u",
                session_id="s",
                new_message="go",
                run_config=RunConfig(max_llm_calls=limit, auto_create_session=True),
            )
        )
    except LlmCallsLimitExceededError as exc:
        error = type(exc).__name__
    stored = runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    return len(model.requests), error, _summary(stored.events), stored.events[-1]


@pytest.mark.parametrize("limit", [1, 3])
def test_max_llm_calls_makes_the_same_calls_and_stores_the_same_history(limit: int) -> None:
    adk_calls, adk_error, adk_history = _google_adk(limit)
    rx_calls, rx_error, rx_history, last = _adk_rx(limit)

    assert (rx_calls, rx_error) == (adk_calls, adk_error) == (limit, "LlmCallsLimitExceededError")
    assert rx_history == adk_history
    assert last.error_code == "BUDGET_EXCEEDED"
    assert last.custom_metadata == {
        "budget": {"limit": "max_llm_calls", "allowed": limit, "used": limit}
    }
