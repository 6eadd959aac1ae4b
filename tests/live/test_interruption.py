"""Interruptions in run_live: the interrupted agent's stale chunks are dropped, its signals
(``interrupted``, ``turn_complete``) always reach the subscriber."""

from __future__ import annotations

import threading
from typing import Any

from google.genai import types
from reactivex.scheduler import ImmediateScheduler

from adk_rx import Event, InMemoryRunner, LiveRequestQueue, LlmAgent, LlmResponse, RunConfig
from adk_rx.testing import ScriptedLiveLlm

AUTO = RunConfig(auto_create_session=True)
TOOL_GO = threading.Event()


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def call(name: str) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args={}))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def barged_in(chunk: str) -> list[Any]:
    """A streamed answer the user interrupts; the model then ends its turn, as Gemini does."""
    return [chunk, LlmResponse(interrupted=True), LlmResponse(turn_complete=True)]


def lookup() -> dict:
    """Finds something (waits until the test lets it answer)."""
    assert TOOL_GO.wait(10)
    return {"found": "it"}


def shown(events: list[Event]) -> list[str]:
    """What the teller's events show: its texts and signals (calls and responses left out)."""
    return [
        "interrupted" if e.interrupted else "turn_complete" if e.turn_complete else e.text()
        for e in events
        if e.author == "teller" and not (e.get_function_calls() or e.get_function_responses())
    ]


class SlowSubscriber:
    """Records events; the first function response blocks delivery until ``release``."""

    def __init__(self, runner: InMemoryRunner, queue: LiveRequestQueue) -> None:
        self.events: list[Event] = []
        self.error: Exception | None = None
        self.done = threading.Event()
        self.blocked = threading.Event()
        self.release = threading.Event()
        self._arrived = threading.Condition()
        runner.run_live(
            user_id="u", session_id="s", live_request_queue=queue, run_config=AUTO
        ).subscribe(on_next=self._on_next, on_error=self._on_error, on_completed=self.done.set)

    def _on_next(self, event: Event) -> None:
        if event.get_function_responses() and not self.blocked.is_set():
            self.blocked.set()
            assert self.release.wait(10)
        with self._arrived:
            self.events.append(event)
            self._arrived.notify_all()

    def _on_error(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def wait_for_text(self, text: str) -> None:
        with self._arrived:
            assert self._arrived.wait_for(lambda: any(e.text() == text for e in self.events), 10)


def test_a_turn_complete_after_interrupted_reaches_the_subscriber() -> None:
    llm = ScriptedLiveLlm([barged_in("Once upon"), "Sure."])
    runner = InMemoryRunner(agent=LlmAgent(name="teller", model=llm))
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    events: list[Event] = []
    done = threading.Event()
    runner.run_live(
        user_id="u", session_id="s", live_request_queue=queue, run_config=AUTO
    ).subscribe(on_next=events.append, on_completed=done.set)

    queue.send_content(user("tell me a story"))
    queue.send_content(user("stop"))
    queue.close()

    assert done.wait(5)
    assert shown(events) == ["Once upon", "interrupted", "turn_complete", "Sure.", "turn_complete"]


def test_an_interruption_purges_queued_chunks_but_not_the_signals_before_it() -> None:
    # While the subscriber is busy with a tool's response, two answers are barged in: the
    # second interruption must drop only the chunks waiting for delivery, never the first
    # answer's ``interrupted`` and ``turn_complete``.
    TOOL_GO.clear()
    llm = ScriptedLiveLlm([call("lookup"), barged_in("Once"), barged_in("Twice"), "Found it."])
    runner = InMemoryRunner(agent=LlmAgent(name="teller", model=llm, tools=[lookup]))
    queue = LiveRequestQueue(scheduler=ImmediateScheduler())
    sub = SlowSubscriber(runner, queue)

    queue.send_content(user("look it up"))
    TOOL_GO.set()  # the tool answers on the I/O pool, whose thread then delivers and blocks
    assert sub.blocked.wait(10)
    queue.send_content(user("tell me"))  # everything now waits in the live flow's outbox
    queue.send_content(user("again"))
    sub.release.set()
    sub.wait_for_text("Found it.")
    queue.close()

    assert sub.done.wait(10) and sub.error is None
    assert shown(sub.events) == [
        "interrupted",  # "Once" was purged by it
        "turn_complete",
        "interrupted",  # "Twice" was purged by it
        "turn_complete",
        "Found it.",
        "turn_complete",
    ]
