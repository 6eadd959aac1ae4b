"""The scoped loop exit, against google-adk 2.13: on the same nested loops (a critic that calls
``exit_loop`` inside ``refine``, inside ``chapters``), google-adk's exit ends both loops
(adk-python #526, #2808); adk_rx's ends ``refine`` only, so ``chapters`` goes on. With one
loop, both end the same way."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.agents import LoopAgent as AdkLoopAgent
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.adk.tools import exit_loop as adk_exit_loop
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, LoopAgent
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import exit_loop

pytestmark = pytest.mark.timeout(60)


def _content(item: str) -> types.Content:
    if item == "EXIT":
        part = types.Part(function_call=types.FunctionCall(name="exit_loop", args={}))
    else:
        part = types.Part(text=item)
    return types.Content(role="model", parts=[part])


class _AdkScripted(AdkBaseLlm):
    script: list[str] = []
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        item = self.script[self.calls]
        self.calls += 1
        yield AdkLlmResponse(content=_content(item))


CRITIC = ["draft", "EXIT"] * 3
PUBLISH = ["chapter 1", "chapter 2", "chapter 3"]


def _texts(events: list[Any]) -> list[str]:
    return [
        f"{e.author}: {p.text}"
        for e in events
        if e.content
        for p in e.content.parts or []
        if p.text and e.author == "publish"
    ]


def _google_adk(nested: bool) -> list[str]:
    async def run() -> list[str]:
        critic = AdkLlmAgent(
            name="critic", model=_AdkScripted(model="c", script=CRITIC), tools=[adk_exit_loop]
        )
        publish = AdkLlmAgent(name="publish", model=_AdkScripted(model="p", script=PUBLISH))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if nested:
                refine = AdkLoopAgent(name="refine", sub_agents=[critic], max_iterations=5)
                root = AdkLoopAgent(name="chapters", sub_agents=[refine, publish], max_iterations=2)
            else:
                root = AdkLoopAgent(name="chapters", sub_agents=[critic, publish], max_iterations=2)
        runner = AdkInMemoryRunner(agent=root, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="write")])
        return _texts(
            [
                e
                async for e in runner.run_async(
                    user_id="u", session_id=session.id, new_message=message
                )
            ]
        )

    return asyncio.run(run())


def _adk_rx(nested: bool) -> list[str]:
    critic = LlmAgent(
        name="critic",
        model=ScriptedLlm([LlmResponse(content=_content(i)) for i in CRITIC]),
        tools=[exit_loop],
    )
    publish = LlmAgent(name="publish", model=ScriptedLlm(PUBLISH))
    if nested:
        refine = LoopAgent(name="refine", sub_agents=[critic], max_iterations=5)
        root = LoopAgent(name="chapters", sub_agents=[refine, publish], max_iterations=2)
    else:
        root = LoopAgent(name="chapters", sub_agents=[critic, publish], max_iterations=2)
    runner = InMemoryRunner(agent=root)
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    return _texts(list(runner.run(user_id="u", session_id="s", new_message="write")))


def test_one_loop_exits_the_same_way_in_both() -> None:
    # round 1: the critic drafts, publish runs; round 2: the critic exits the only loop
    assert _adk_rx(nested=False) == _google_adk(nested=False) == ["publish: chapter 1"]


def test_a_nested_exit_ends_only_the_inner_loop_where_google_adk_ends_both() -> None:
    assert _google_adk(nested=True) == []  # google-adk: the outer loop ended with the inner
    assert _adk_rx(nested=True) == ["publish: chapter 1", "publish: chapter 2"]
