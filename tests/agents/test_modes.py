"""LlmAgent(mode=...): single_turn and task sub-agents run inline and in view, as google-adk
2.13 runs them (its events, history and model requests are the oracle)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx.errors import InvalidAgentError
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm

pytestmark = pytest.mark.timeout(60)

Call = tuple[str, dict[str, Any]]


def _part(item: str | Call) -> types.Part:
    if isinstance(item, str):
        return types.Part(text=item)
    return types.Part(function_call=types.FunctionCall(name=item[0], args=item[1]))


class _AdkScripted(AdkBaseLlm):
    script: list[Any] = []
    requests: list[Any] = []
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        self.requests.append(llm_request)
        item = self.script[self.calls]
        self.calls += 1
        yield AdkLlmResponse(content=types.Content(role="model", parts=[_part(item)]))


def _rx_model(script: list[Any]) -> ScriptedLlm:
    return ScriptedLlm(
        [LlmResponse(content=types.Content(role="model", parts=[_part(i)])) for i in script]
    )


def _summary(event: Any) -> tuple[str, ...]:
    out: list[str] = []
    for part in (event.content.parts or []) if event.content else []:
        if part.text:
            out.append(part.text)
        if part.function_call:
            out.append(
                f"call {part.function_call.name}{sorted((part.function_call.args or {}).items())}"
            )
        if part.function_response:
            out.append(f"answer {part.function_response.name} {part.function_response.response}")
    return tuple(out)


def _contents(request: Any) -> list[tuple[str, list[str]]]:
    return [
        (
            c.role,
            [
                p.text
                or (p.function_call and "call " + (p.function_call.name or ""))
                or (p.function_response and "answer " + (p.function_response.name or ""))
                or "?"
                for p in c.parts or []
            ],
        )
        for c in request.contents
    ]


def _tools(request: Any) -> list[str]:
    names: set[str] = set()
    for tool in request.config.tools or []:
        names |= {d.name for d in tool.function_declarations or []}
    return sorted(names)


def _adk(mode: str, helper_script: list[Any], root_script: list[Any], turns: list[str]) -> Any:
    helper_llm = _AdkScripted(model="h", script=helper_script, requests=[])
    root_llm = _AdkScripted(model="r", script=root_script, requests=[])
    helper = AdkLlmAgent(name="helper", model=helper_llm, instruction="help", mode=mode)
    root = AdkLlmAgent(name="root", model=root_llm, instruction="root", sub_agents=[helper])

    async def run() -> tuple[list[Any], list[Any]]:
        runner = AdkInMemoryRunner(agent=root, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        seen: list[Any] = []
        for text in turns:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                seen.append(event)
        stored = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        )
        assert stored is not None
        return seen, stored.events

    seen, stored = asyncio.run(run())
    return seen, stored, root_llm.requests, helper_llm.requests


def _rx(mode: str, helper_script: list[Any], root_script: list[Any], turns: list[str]) -> Any:
    helper_llm, root_llm = _rx_model(helper_script), _rx_model(root_script)
    helper = LlmAgent(name="helper", model=helper_llm, instruction="help", mode=mode)  # type: ignore[arg-type]
    root = LlmAgent(name="root", model=root_llm, instruction="root", sub_agents=[helper])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = runner.session_service.create_session(app_name="app", user_id="u").run()
    seen: list[Any] = []
    for text in turns:
        seen += list(runner.run(user_id="u", session_id=session.id, new_message=text))
    stored = runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    return seen, stored.run().events, root_llm.requests, helper_llm.requests


def _authors(events: list[Any], *, parent_answers: bool) -> list[str]:
    # google-adk authors the response to the parent's task call "user"; adk_rx the parent
    return [
        "root" if parent_answers and e.author == "user" and e.get_function_responses() else e.author
        for e in events
    ]


def test_a_single_turn_sub_agent_runs_inline_on_its_branch_like_google_adk() -> None:
    script = (["helper answer"], [("helper", {"request": "do X"}), "root final", "root again"])
    turns = ["hi", "and again"]
    adk = _adk("single_turn", *script, turns)
    rx = _rx("single_turn", *script, turns)

    assert [_summary(e) for e in rx[0]] == [_summary(e) for e in adk[0]]
    assert [e.author for e in rx[0]] == [e.author for e in adk[0]]
    assert [e.author for e in rx[1]] == [e.author for e in adk[1]]
    assert [_contents(r) for r in rx[2]] == [_contents(r) for r in adk[2]]
    assert [_contents(r) for r in rx[3]] == [_contents(r) for r in adk[3]] == [[("user", ["do X"])]]
    assert [_tools(r) for r in rx[2]] == [_tools(r) for r in adk[2]] == [["helper"]] * 3
    helper_event = next(e for e in rx[0] if e.author == "helper")
    assert helper_event.branch.startswith("helper@")
    assert rx[0][2].get_function_responses()[0].response == {"result": "helper answer"}


def test_a_task_sub_agent_chats_with_the_user_then_answers_its_parent_like_google_adk() -> None:
    script = (
        ["what detail?", ("finish_task", {"result": "done X"})],
        [("helper", {"request": "do X"}), "root final"],
    )
    turns = ["hi", "detail is 42"]
    adk = _adk("task", *script, turns)
    rx = _rx("task", *script, turns)

    assert [_summary(e) for e in rx[0]] == [_summary(e) for e in adk[0]]
    assert [e.author for e in rx[0]] == _authors(adk[0], parent_answers=True)
    assert [e.author for e in rx[1]] == _authors(adk[1], parent_answers=True)
    assert [_contents(r) for r in rx[2]] == [_contents(r) for r in adk[2]]
    assert [_contents(r) for r in rx[3]] == [_contents(r) for r in adk[3]]
    assert [_tools(r) for r in rx[3]] == [_tools(r) for r in adk[3]]
    finished = next(e for e in rx[0] if e.output is not None)
    assert finished.author == "helper" and finished.output == {"result": "done X"}
    assert [e.output for e in adk[0] if e.output is not None] == [{"result": "done X"}]


def test_delegated_sub_agents_are_no_transfer_targets() -> None:
    chat = LlmAgent(name="chat", model=_rx_model([]))
    single = LlmAgent(name="single", model=_rx_model([]), mode="single_turn")
    task = LlmAgent(name="task", model=_rx_model([]), mode="task")
    root = LlmAgent(name="root", model=_rx_model([]), sub_agents=[chat, single, task])

    assert [a.name for a in root.transfer_targets()] == ["chat"]
    assert [t.name for t in root.canonical_tools()] == ["transfer_to_agent", "single", "task"]
    assert [t.name for t in task.canonical_tools()] == ["transfer_to_agent", "finish_task"]
    assert single.include_contents == "none" and task.include_contents == "default"
    with pytest.raises(InvalidAgentError, match="mode must be"):
        LlmAgent(name="bad", mode="solo")  # type: ignore[arg-type]
