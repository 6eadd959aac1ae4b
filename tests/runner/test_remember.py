"""App(memory_config=MemoryConfig(add_session_after_invocation=True)): each turn that ends
normally is added to the memory service, so the next session can recall it."""

from __future__ import annotations

import logging

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import App, InMemorySessionService, LlmAgent, Runner
from adk_rx.apps import MemoryConfig
from adk_rx.errors import ConfigurationError
from adk_rx.memory import HashingEmbedder, VectorMemoryService
from adk_rx.sessions import Session
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import preload_memory

REMEMBER = MemoryConfig(add_session_after_invocation=True)


def _runner(
    llm: ScriptedLlm, memory: VectorMemoryService | None, config: MemoryConfig | None
) -> Runner:
    agent = LlmAgent(name="assistant", model=llm, tools=[preload_memory])
    app = App(name="app", root_agent=agent, memory_config=config)
    runner = Runner(app=app, session_service=InMemorySessionService(), memory_service=memory)
    for sid in ("s1", "s2"):
        runner.session_service.create_session(app_name="app", user_id="u", session_id=sid).run()
    return runner


def _turn(runner: Runner, session_id: str, text: str) -> None:
    runner.run_async(user_id="u", session_id=session_id, new_message=text).pipe(ops.to_list()).run()


def _search(memory: VectorMemoryService, query: str) -> str:
    found = memory.search_memory(app_name="app", user_id="u", query=query).run()
    return "\n".join(p.text or "" for m in found.memories for p in m.content.parts or [])


def test_each_turn_is_remembered_before_the_run_completes() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder())
    llm = ScriptedLlm(["Nice name!", "Noted.", "Your dog is Rex."])
    runner = _runner(llm, memory, REMEMBER)

    _turn(runner, "s1", "My dog is called Rex")
    assert "user: My dog is called Rex\nassistant: Nice name!" in _search(memory, "dog Rex")
    _turn(runner, "s1", "and my cat is Tom")
    _turn(runner, "s2", "what is my dog called?")

    preloaded = llm.requests[2].contents[0].parts[0].text or ""  # type: ignore[index]
    assert "Rex" in preloaded
    assert "cat is Tom" in _search(memory, "cat Tom")  # the second turn of s1 too


def test_without_the_option_nothing_is_added() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder())

    _turn(_runner(ScriptedLlm(["hi"]), memory, MemoryConfig()), "s1", "My dog is called Rex")

    assert _search(memory, "dog Rex") == ""


def test_the_option_needs_a_memory_service() -> None:
    with pytest.raises(ConfigurationError, match="pass memory_service= to the Runner"):
        _runner(ScriptedLlm([]), None, REMEMBER)


def test_a_failing_memory_service_is_logged_and_the_turn_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(VectorMemoryService):
        def add_session_to_memory(self, session: Session) -> Observable[None]:
            return rx.throw(RuntimeError("disk full"))

    runner = _runner(ScriptedLlm(["hello"]), Failing("memory://", HashingEmbedder()), REMEMBER)

    with caplog.at_level(logging.WARNING, logger="adk_rx.runner"):
        _turn(runner, "s1", "hi")

    assert "adding session s1 to memory failed: disk full" in caplog.text
