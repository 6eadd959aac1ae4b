"""The built-in plugins against google-adk 2.13's of the same names, case by case."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from types import SimpleNamespace
from typing import Any

import pytest
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, RunConfig
from adk_rx.models.llm_request import LlmRequest
from adk_rx.plugins import (
    ContextFilterPlugin,
    GlobalInstructionPlugin,
    ReflectAndRetryToolPlugin,
    SaveFilesAsArtifactsPlugin,
)
from adk_rx.testing import ScriptedLlm


def _text(role: str, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def _call(call_id: str) -> types.Content:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name="f", args={}))
    return types.Content(role="model", parts=[part])


def _answer(call_id: str) -> types.Content:
    part = types.Part(function_response=types.FunctionResponse(id=call_id, name="f", response={}))
    return types.Content(role="user", parts=[part])


class _GoogleFake:
    """A google-adk model that records its requests and answers ``ok``."""

    def __new__(cls) -> Any:
        from google.adk.models.base_llm import BaseLlm
        from google.adk.models.llm_response import LlmResponse

        class Fake(BaseLlm):
            requests: list[Any] = []

            async def generate_content_async(
                self, llm_request: Any, stream: bool = False
            ) -> AsyncGenerator[Any, None]:
                self.requests.append(llm_request)
                yield LlmResponse(content=_text("model", "ok"))

        return Fake(model="fake")


def _google_run(plugin: Any, message: types.Content, state: dict[str, Any]) -> tuple[Any, Any]:
    from google.adk.agents import LlmAgent as AdkAgent
    from google.adk.runners import InMemoryRunner as AdkRunner

    model = _GoogleFake()

    async def go() -> Any:
        runner = AdkRunner(
            agent=AdkAgent(name="desk", model=model, instruction="Be brief."),
            app_name="demo",
            plugins=[plugin],
        )
        session = await runner.session_service.create_session(
            app_name="demo", user_id="u", state=state
        )
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
        stored = await runner.session_service.get_session(
            app_name="demo", user_id="u", session_id=session.id
        )
        return runner, stored

    runner, stored = asyncio.run(go())
    return model.requests[0], (runner, stored)


def _ours_run(plugin: Any, message: types.Content, state: dict[str, Any]) -> tuple[Any, Any]:
    model = ScriptedLlm(["ok"])
    runner = InMemoryRunner(
        agent=LlmAgent(name="desk", model=model, instruction="Be brief."),
        app_name="demo",
        plugins=[plugin],
    )
    session = runner.session_service.create_session(app_name="demo", user_id="u", state=state).run()
    list(
        runner.run(user_id="u", session_id=session.id, new_message=message, run_config=RunConfig())
    )
    stored = runner.session_service.get_session(
        app_name="demo", user_id="u", session_id=session.id
    ).run()
    return model.requests[0], (runner, stored)


def _system_text(request: Any) -> str:
    si = request.config.system_instruction
    if isinstance(si, str):
        return si
    return "\n\n".join(p.text for p in si.parts or [] if p.text)


# -- GlobalInstructionPlugin ------------------------------------------------------------------


@pytest.mark.parametrize(
    "instruction",
    ["You serve {name}; theme {app:theme?}.", lambda ctx: f"Provided for {ctx.state['name']}."],
    ids=["template", "provider"],
)
def test_global_instruction_leads_the_system_instruction_as_in_google_adk(instruction: Any):
    from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin as AdkGlobal

    message = _text("user", "hi")
    theirs, _ = _google_run(AdkGlobal(instruction), message, {"name": "Ada"})
    ours, _ = _ours_run(GlobalInstructionPlugin(instruction), message, {"name": "Ada"})

    expected_head = _system_text(theirs).split("\n\n")[:2]
    assert _system_text(ours).split("\n\n")[:2] == expected_head
    assert expected_head[1] == "Be brief."


# -- ContextFilterPlugin ----------------------------------------------------------------------

HISTORY = [
    _text("user", "q1"),
    _text("model", "a1"),
    _text("user", "q2"),
    _call("c1"),
    _answer("c1"),
    _text("model", "a2"),
    _text("user", "q3a"),
    _text("user", "q3b"),
    _call("c2"),
    _text("user", "q4"),
    _answer("c2"),
    _text("model", "a4"),
]


@pytest.mark.parametrize(
    ("keep", "remove"),
    [(1, 1), (2, 1), (3, 1), (1, 2), (2, 3), (5, 1), (None, 1)],
)
def test_context_filter_keeps_what_google_adk_keeps(keep: int | None, remove: int):
    from google.adk.models.llm_request import LlmRequest as AdkRequest
    from google.adk.plugins.context_filter_plugin import ContextFilterPlugin as AdkFilter

    theirs = AdkRequest(contents=list(HISTORY))
    asyncio.run(
        AdkFilter(num_invocations_to_keep=keep, remove_amount=remove).before_model_callback(
            callback_context=None,  # type: ignore[arg-type]  # not read by the filter
            llm_request=theirs,
        )
    )
    ours = LlmRequest(contents=list(HISTORY))
    ContextFilterPlugin(num_invocations_to_keep=keep, remove_amount=remove).before_model_callback(
        callback_context=None,  # type: ignore[arg-type]
        llm_request=ours,
    )

    assert ours.contents == theirs.contents


def test_context_filter_runs_the_custom_filter_after_the_cut_and_survives_its_failure():
    request = LlmRequest(contents=list(HISTORY))
    ContextFilterPlugin(
        num_invocations_to_keep=1, custom_filter=lambda c: c[-1:]
    ).before_model_callback(
        callback_context=None,  # type: ignore[arg-type]
        llm_request=request,
    )
    broken = LlmRequest(contents=list(HISTORY))

    def fails(_: list[types.Content]) -> list[types.Content]:
        raise RuntimeError("boom")

    ContextFilterPlugin(custom_filter=fails).before_model_callback(
        callback_context=None,  # type: ignore[arg-type]
        llm_request=broken,
    )

    assert request.contents == [HISTORY[-1]]
    assert broken.contents == HISTORY


# -- ReflectAndRetryToolPlugin ----------------------------------------------------------------

STEPS: list[tuple[str, str]] = [
    ("error", "i1"),
    ("error", "i1"),
    ("ok", "i1"),
    ("error", "i1"),
    ("error", "i2"),
    ("result_error", "i1"),
    ("error", "i1"),
    ("error", "i1"),
]


def _replay_steps(plugin: Any, is_async: bool, extract: bool) -> list[Any]:
    tool = SimpleNamespace(name="lookup")
    outcomes: list[Any] = []
    for kind, invocation in STEPS:
        context = SimpleNamespace(invocation_id=invocation)
        args = {"order_id": "12"}
        try:
            if kind == "error":
                answer = plugin.on_tool_error_callback(
                    tool=tool, tool_args=args, tool_context=context, error=ValueError("no order")
                )
            else:
                result = {"error": "bad"} if kind == "result_error" else {"ok": True}
                answer = plugin.after_tool_callback(
                    tool=tool, tool_args=args, tool_context=context, result=result
                )
            outcomes.append(asyncio.run(answer) if is_async else answer)
        except Exception as exc:  # the plugin raises past its limit
            outcomes.append(("raised", type(exc).__name__, str(exc)))
    return outcomes


@pytest.mark.parametrize("max_retries", [0, 1, 2, 3])
@pytest.mark.parametrize("throw", [True, False])
@pytest.mark.parametrize("scope", ["invocation", "global"])
def test_reflect_and_retry_answers_as_google_adk_does(max_retries: int, throw: bool, scope: str):
    from google.adk.plugins._reflect_retry_utils import TrackingScope as AdkScope
    from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin as AdkReflect

    from adk_rx.plugins import TrackingScope

    class AdkExtracting(AdkReflect):
        async def extract_error_from_result(self, *, tool, tool_args, tool_context, result):
            return result if "error" in result else None

    class OursExtracting(ReflectAndRetryToolPlugin):
        def extract_error_from_result(self, *, tool, tool_args, tool_context, result):
            return result if "error" in result else None

    theirs = _replay_steps(
        AdkExtracting(
            max_retries=max_retries,
            throw_exception_if_retry_exceeded=throw,
            tracking_scope=AdkScope(scope),
        ),
        is_async=True,
        extract=True,
    )
    ours = _replay_steps(
        OursExtracting(
            max_retries=max_retries,
            throw_exception_if_retry_exceeded=throw,
            tracking_scope=TrackingScope(scope),
        ),
        is_async=False,
        extract=True,
    )

    assert ours == theirs


# -- SaveFilesAsArtifactsPlugin ---------------------------------------------------------------


def test_save_files_as_artifacts_saves_and_replaces_the_file_as_google_adk_does():
    from google.adk.plugins.save_files_as_artifacts_plugin import (
        SaveFilesAsArtifactsPlugin as AdkSave,
    )

    blob = types.Blob(mime_type="text/plain", data=b"hello", display_name="notes.txt")
    unnamed = types.Blob(mime_type="image/png", data=b"\x89PNG")
    message = types.Content(
        role="user",
        parts=[
            types.Part(text="see"),
            types.Part(inline_data=blob),
            types.Part(inline_data=unnamed),
        ],
    )
    theirs, (adk_runner, adk_session) = _google_run(AdkSave(), message, {})
    ours, (runner, session) = _ours_run(SaveFilesAsArtifactsPlugin(), message, {})

    def user_parts(request: Any) -> list[Any]:
        return [p.text for p in request.contents[0].parts]

    their_parts, our_parts = user_parts(theirs), user_parts(ours)
    assert our_parts[:2] == their_parts[:2] == ["see", '[Uploaded Artifact: "notes.txt"]']
    assert our_parts[2].startswith('[Uploaded Artifact: "artifact_')
    assert their_parts[2].startswith('[Uploaded Artifact: "artifact_')

    async def their_file() -> Any:
        return await adk_runner.artifact_service.load_artifact(
            app_name="demo", user_id="u", session_id=adk_session.id, filename="notes.txt"
        )

    ours_file = runner.artifact_service.load_artifact(
        app_name="demo", user_id="u", session_id=session.id, filename="notes.txt"
    ).run()
    assert ours_file.inline_data.data == asyncio.run(their_file()).inline_data.data == b"hello"
    their_delta = {k: v for e in adk_session.events for k, v in e.actions.artifact_delta.items()}
    our_delta = {k: v for e in session.events for k, v in e.actions.artifact_delta.items()}
    assert our_delta["notes.txt"] == their_delta["notes.txt"] == 0
    assert len(our_delta) == len(their_delta) == 2


def test_reflect_and_retry_through_a_runner_gives_the_model_guidance_then_gives_up():
    from adk_rx import LlmResponse

    def lookup(order_id: str) -> dict:
        """Looks an order up."""
        raise ValueError(f"no order {order_id}")

    def call(order_id: str) -> LlmResponse:
        part = types.Part(
            function_call=types.FunctionCall(name="lookup", args={"order_id": order_id})
        )
        return LlmResponse(content=types.Content(role="model", parts=[part]))

    model = ScriptedLlm([call("1"), call("2"), "I could not find it."])
    plugin = ReflectAndRetryToolPlugin(max_retries=1, throw_exception_if_retry_exceeded=False)
    runner = InMemoryRunner(
        agent=LlmAgent(name="desk", model=model, tools=[lookup]), plugins=[plugin]
    )
    config = RunConfig(auto_create_session=True)

    events = list(runner.run(user_id="u", session_id="s", new_message="find 1", run_config=config))

    answers = [r.response or {} for e in events for r in e.get_function_responses()]
    assert [a["retry_count"] for a in answers] == [1, 1]
    assert "retry attempt **1 of 1**" in answers[0]["reflection_guidance"]
    assert "has failed consecutively 1 times" in answers[1]["reflection_guidance"]
    assert answers[0]["error_details"] == "no order 1"
    assert events[-1].text() == "I could not find it."


def test_reflect_and_retry_past_the_limit_fails_the_run_with_the_tools_error_as_cause():
    from adk_rx import CallbackError, LlmResponse

    def lookup(order_id: str) -> dict:
        """Looks an order up."""
        raise ValueError("no order")

    part = types.Part(function_call=types.FunctionCall(name="lookup", args={"order_id": "1"}))
    call = LlmResponse(content=types.Content(role="model", parts=[part]))
    model = ScriptedLlm([call, call, "unused"])
    runner = InMemoryRunner(
        agent=LlmAgent(name="desk", model=model, tools=[lookup]),
        plugins=[ReflectAndRetryToolPlugin(max_retries=1)],
    )

    with pytest.raises(CallbackError) as raised:
        list(runner.run(user_id="u", session_id="s", new_message="hi",
                        run_config=RunConfig(auto_create_session=True)))  # fmt: skip

    assert isinstance(raised.value.__cause__, ValueError)
