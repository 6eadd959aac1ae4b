"""preload_memory: the relevant memories go into each model request (google-adk's shape)."""

from __future__ import annotations

import logging

import pytest
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.events import Event
from adk_rx.memory import HashingEmbedder, SearchMemoryResponse, VectorMemoryService
from adk_rx.sessions import Session
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import FunctionTool, load_memory, preload_memory
from tests.tool_harness import call, calls


def _said(author: str, text: str, timestamp: float) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        timestamp=timestamp,
    )


class CountingMemory(VectorMemoryService):
    """Vector memory in this process that counts its searches."""

    def __init__(self) -> None:
        super().__init__("memory://", HashingEmbedder())
        self.searches = 0

    def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> Observable[SearchMemoryResponse]:
        self.searches += 1
        return super().search_memory(app_name=app_name, user_id=user_id, query=query)


def _runner(llm: ScriptedLlm, memory: VectorMemoryService | None, *tools: object) -> Runner:
    agent = LlmAgent(name="assistant", model=llm, tools=[preload_memory, *tools])  # type: ignore[list-item]
    runner = Runner(
        app_name="app",
        agent=agent,
        session_service=InMemorySessionService(),
        memory_service=memory,
    )
    runner.session_service.create_session(app_name="app", user_id="u", session_id="now").run()
    return runner


def _remember(memory: VectorMemoryService) -> None:
    earlier = [
        Session(id="s1", app_name="app", user_id="u", events=[
            _said("user", "The train to Paris leaves at noon", 1.0),
            _said("assistant", "Noted.", 2.0),
        ]),
        Session(id="s2", app_name="app", user_id="u", events=[
            _said("user", "My dog is called Rex", 86400.0),
            _said("assistant", "What a good name.", 86401.0),
        ]),
    ]  # fmt: skip
    for session in earlier:
        memory.add_session_to_memory(session).pipe(ops.to_list()).run()


def _turn(runner: Runner, text: str) -> list[Event]:
    return (
        runner.run_async(user_id="u", session_id="now", new_message=text).pipe(ops.to_list()).run()
    )


def test_the_most_relevant_memories_precede_the_user_message_in_the_request() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder(), top_k=1)
    _remember(memory)
    llm = ScriptedLlm(["Your dog is Rex."])

    _turn(_runner(llm, memory), "what is my dog called?")

    request = llm.requests[0]
    preloaded, asked = request.contents[-2:]
    assert asked.parts is not None and asked.parts[0].text == "what is my dog called?"
    assert preloaded.role == "user" and preloaded.parts is not None
    assert preloaded.parts[0].text == (
        "The following content is from your previous conversations with the user.\n"
        "They may be useful for answering the user's current query.\n"
        "<PAST_CONVERSATIONS>\n"
        "Time: 1970-01-02T00:00:00+00:00\n"
        "user: My dog is called Rex\nassistant: What a good name.\n"
        "</PAST_CONVERSATIONS>\n"
    )
    assert "PAST_CONVERSATIONS" not in request.system_instruction_text()
    assert request.function_declarations() == []  # the model never calls it


def test_memories_are_ranked_and_not_stored_in_the_session() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder())
    _remember(memory)
    llm = ScriptedLlm(["ok"])
    runner = _runner(llm, memory)

    _turn(runner, "when does my train to Paris leave?")

    text = llm.requests[0].contents[0].parts[0].text  # type: ignore[index]
    assert text is not None and text.index("Paris leaves") < text.index("Rex")
    session = runner.session_service.get_session(
        app_name="app", user_id="u", session_id="now"
    ).run()
    assert session is not None
    stored = " ".join(
        e.content.parts[0].text or "" for e in session.events if e.content and e.content.parts
    )
    assert "PAST_CONVERSATIONS" not in stored


def test_one_search_serves_every_model_call_of_the_invocation() -> None:
    memory = CountingMemory()
    _remember(memory)
    lookup = FunctionTool(lambda: {"weather": "sunny"}, name="weather")
    llm = ScriptedLlm([calls(call("weather")), "It is sunny, and Rex may go out."])

    _turn(_runner(llm, memory, lookup), "can my dog Rex go out?")

    assert memory.searches == 1
    second = llm.requests[1].contents
    # In a tool-call step the memories follow the function response (google-adk's boundary).
    assert second[-2].parts is not None and second[-2].parts[0].function_response is not None
    assert "Rex" in (second[-1].parts[0].text or "")  # type: ignore[index]


def test_nothing_is_added_when_nothing_is_remembered() -> None:
    llm = ScriptedLlm(["hello"])

    _turn(_runner(llm, VectorMemoryService("memory://", HashingEmbedder())), "hi there")

    assert [c.parts[0].text for c in llm.requests[0].contents] == ["hi there"]  # type: ignore[index]


@pytest.mark.parametrize("broken", ["no service", "failing search"])
def test_a_failed_search_is_logged_and_the_turn_goes_on(
    broken: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing(VectorMemoryService):
        def search_memory(
            self, *, app_name: str, user_id: str, query: str
        ) -> Observable[SearchMemoryResponse]:
            return rx.throw(RuntimeError("the store is down"))

    memory = None if broken == "no service" else Failing("memory://", HashingEmbedder())
    llm = ScriptedLlm(["still here"])

    with caplog.at_level(logging.WARNING, logger="adk_rx.tools"):
        events = _turn(_runner(llm, memory), "hi there")

    assert events[-1].text() == "still here"
    assert len(llm.requests[0].contents) == 1
    assert "preload_memory: the memory search failed" in caplog.text


def test_load_memory_returns_ranked_entries_with_scores() -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder())
    _remember(memory)
    llm = ScriptedLlm([calls(call("load_memory", {"query": "dog called Rex"})), "Rex."])
    agent = LlmAgent(name="assistant", model=llm, tools=[load_memory])
    runner = Runner(
        app_name="app", agent=agent, session_service=InMemorySessionService(), memory_service=memory
    )
    runner.session_service.create_session(app_name="app", user_id="u", session_id="now").run()

    _turn(runner, "what is my dog called?")

    response = llm.requests[1].contents[-1].parts[0].function_response  # type: ignore[index]
    assert response is not None and response.response is not None
    memories = response.response["memories"]
    assert "Rex" in memories[0]["content"]["parts"][0]["text"]
    scores = [m["score"] for m in memories]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0.3
