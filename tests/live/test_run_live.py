"""Runner.run_live with ScriptedLiveLlm: events, storage before emission, tools, interruption,
close, disposal, transfer, deadlines."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from google.genai import types
from reactivex.scheduler import ImmediateScheduler
from reactivex.testing import TestScheduler

from adk_rx import (
    Event,
    InMemoryRunner,
    InvocationTimeoutError,
    LiveRequestQueue,
    LlmAgent,
    LlmResponse,
    RunConfig,
    Runner,
)
from adk_rx.errors import ConfigurationError
from adk_rx.testing import ScriptedLiveLlm, ScriptedLlm, simplify_events

AUTO = RunConfig(auto_create_session=True)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def call(name: str, **args: Any) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


class Recorder:
    """Subscribes to run_live and checks that each stored-kind event is stored before it
    arrives."""

    def __init__(self, runner: Runner, queue: LiveRequestQueue, **kwargs: Any) -> None:
        self.runner = runner
        self.events: list[Event] = []
        self.unstored: list[Event] = []
        self.error: Exception | None = None
        self.done = threading.Event()
        self._arrived = threading.Condition()
        self.subscription = runner.run_live(
            user_id="u",
            session_id="s",
            live_request_queue=queue,
            run_config=kwargs.get("config", AUTO),
        ).subscribe(on_next=self._on_next, on_error=self._on_error, on_completed=self.done.set)

    def _on_next(self, event: Event) -> None:
        if not event.partial:
            stored = self.session().events
            if not any(e.id == event.id for e in stored):
                self.unstored.append(event)
        with self._arrived:
            self.events.append(event)
            self._arrived.notify_all()

    def wait_for(self, match: Any) -> None:
        """Waits until an event ``match`` accepts arrived (tools run on the I/O pool)."""
        with self._arrived:
            assert self._arrived.wait_for(lambda: any(match(e) for e in self.events), 10)

    def wait_for_text(self, text: str) -> None:
        self.wait_for(lambda e: e.text() == text)

    def _on_error(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def session(self) -> Any:
        return self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id="u", session_id="s"
        ).run()


def immediate_queue() -> LiveRequestQueue:
    return LiveRequestQueue(scheduler=ImmediateScheduler())


def test_a_text_turn_emits_the_users_turn_the_answer_and_turn_complete() -> None:
    llm = ScriptedLiveLlm(["Hello there!"])
    runner = InMemoryRunner(agent=LlmAgent(name="talker", model=llm, instruction="Be warm."))
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    queue.send_content(user("hi"))
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    assert simplify_events(rec.events) == [
        "user: hi",
        "talker: Hello there!",
        "talker: [NO_CONTENT]",
    ]
    assert rec.events[-1].turn_complete and rec.events[-1].partial
    assert rec.unstored == []
    stored = rec.session().events
    assert [(e.author, e.text()) for e in stored] == [("user", "hi"), ("talker", "Hello there!")]
    [request] = llm.requests
    assert "Be warm." in request.system_instruction_text()
    assert llm.connections[0].closed


def test_realtime_blobs_and_activity_markers_reach_the_connection_in_order() -> None:
    llm = ScriptedLiveLlm([])
    runner = InMemoryRunner(agent=LlmAgent(name="ears", model=llm))
    queue = immediate_queue()
    rec = Recorder(runner, queue)
    frames = [types.Blob(mime_type="audio/pcm;rate=16000", data=bytes([n])) for n in range(5)]

    queue.send_activity_start()
    for frame in frames:
        queue.send_realtime(frame)
    queue.send_activity_end()
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    assert llm.received == frames
    assert llm.connections[0].activity == ["start", "end"]


def test_history_is_sent_once_on_connect() -> None:
    llm = ScriptedLiveLlm(["again"])
    runner = InMemoryRunner(agent=LlmAgent(name="talker", model=llm))
    first = immediate_queue()
    rec = Recorder(runner, first)
    first.send_content(user("one"))
    first.close()
    assert rec.done.wait(5)

    second_llm_script = ScriptedLiveLlm(["two back"])
    runner2 = Runner(  # same store, same session
        app_name=runner.app_name,
        agent=LlmAgent(name="talker", model=second_llm_script),
        session_service=runner.session_service,
    )
    second = immediate_queue()
    rec2 = Recorder(runner2, second)
    second.send_content(user("two"))
    second.close()

    assert rec2.done.wait(5) and rec2.error is None
    [history] = second_llm_script.history
    assert [c.parts[0].text for c in history] == ["one", "again"]  # type: ignore[index]


def test_an_interruption_is_emitted_and_the_turn_stops() -> None:
    llm = ScriptedLiveLlm(
        [
            [LlmResponse.text("Once upon", partial=True), LlmResponse(interrupted=True)],
            "Sure, stopping.",
        ]
    )
    runner = InMemoryRunner(agent=LlmAgent(name="teller", model=llm))
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    queue.send_content(user("tell me a story"))
    queue.send_content(user("stop!"))
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    interrupted = [e for e in rec.events if e.interrupted]
    assert len(interrupted) == 1 and interrupted[0].partial
    texts = [(e.author, e.text(), bool(e.partial)) for e in rec.events if e.text()]
    assert texts == [
        ("user", "tell me a story", False),
        ("teller", "Once upon", True),
        ("user", "stop!", False),
        ("teller", "Sure, stopping.", False),
    ]


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def explode() -> None:
    """Always fails."""
    raise RuntimeError("kaboom")


def test_a_tool_call_runs_and_its_response_goes_back_on_the_connection() -> None:
    llm = ScriptedLiveLlm([call("add", a=2, b=3), "It is 5."])
    seen: list[str] = []
    agent = LlmAgent(
        name="calc",
        model=llm,
        tools=[add],
        before_tool_callback=lambda tool, args, tool_context: seen.append(tool.name),
    )
    runner = InMemoryRunner(agent=agent)
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    queue.send_content(user("2+3?"))
    rec.wait_for_text("It is 5.")
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    assert simplify_events([e for e in rec.events if not e.partial]) == [
        "user: 2+3?",
        'calc: FunctionCall(add, {"a": 2, "b": 3})',
        'calc: FunctionResponse(add, {"result": 5})',
        "calc: It is 5.",
    ]
    assert seen == ["add"]
    sent_back = llm.received[1]
    assert isinstance(sent_back, types.Content)
    assert sent_back.parts[0].function_response.response == {"result": 5}  # type: ignore[index,union-attr]
    assert rec.unstored == []


def test_a_tool_that_raises_answers_the_model_with_an_error() -> None:
    llm = ScriptedLiveLlm([call("explode"), "Sorry, that failed."])
    runner = InMemoryRunner(agent=LlmAgent(name="bomb", model=llm, tools=[explode]))
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    queue.send_content(user("go"))
    rec.wait_for_text("Sorry, that failed.")
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    response = llm.received[1]
    assert isinstance(response, types.Content)
    body = response.parts[0].function_response.response  # type: ignore[index,union-attr]
    assert "kaboom" in body["error"]


def test_a_transfer_reconnects_with_the_target_agents_request_and_history() -> None:
    root_llm = ScriptedLiveLlm([call("transfer_to_agent", agent_name="billing")])
    billing_llm = ScriptedLiveLlm(["Refund issued."])
    billing = LlmAgent(name="billing", model=billing_llm, instruction="You do refunds.",
                       description="Refunds.")  # fmt: skip
    root = LlmAgent(name="root", model=root_llm, sub_agents=[billing])
    runner = InMemoryRunner(agent=root)
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    queue.send_content(user("refund please"))
    rec.wait_for(lambda e: e.actions.transfer_to_agent == "billing")
    queue.send_content(user("order 1234"))
    queue.close()

    assert rec.done.wait(5) and rec.error is None
    assert root_llm.connections[0].closed
    [billing_request] = billing_llm.requests
    assert "You do refunds." in billing_request.system_instruction_text()
    assert billing_llm.received == [user("order 1234")]
    assert [e.author for e in rec.events if e.text() == "Refund issued."] == ["billing"]
    assert billing_llm.history[0]  # the conversation so far went to the new connection


def test_disposing_closes_the_connection_and_leaves_the_session_usable() -> None:
    hold = threading.Event()

    def slow(a: int) -> int:
        """Waits."""
        hold.wait(10)
        return a

    llm = ScriptedLiveLlm([call("slow", a=1)])
    runner = InMemoryRunner(agent=LlmAgent(name="waiter", model=llm, tools=[slow]))
    queue = immediate_queue()
    rec = Recorder(runner, queue)
    queue.send_content(user("wait"))
    threads_before = threading.active_count()

    rec.subscription.dispose()
    hold.set()
    runner.when_idle(user_id="u", session_id="s").run()

    assert llm.connections[0].closed
    stored = rec.session().events
    assert stored[-1].error_code == "CANCELLED"
    responses = [r for e in stored for r in e.get_function_responses()]
    assert responses and responses[0].response == {"error": "cancelled"}
    assert threading.active_count() <= threads_before + 1


def test_the_run_config_timeout_ends_a_live_session() -> None:
    clock = TestScheduler()
    llm = ScriptedLiveLlm(["hi"])
    agent = LlmAgent(name="talker", model=llm)
    runner = InMemoryRunner(agent=agent, timer_scheduler=clock)
    queue = immediate_queue()
    rec = Recorder(runner, queue, config=RunConfig(auto_create_session=True, timeout=30))
    queue.send_content(user("hello"))

    clock.advance_by(31)

    assert rec.done.is_set()
    assert isinstance(rec.error, InvocationTimeoutError)
    assert llm.connections[0].closed
    assert rec.session().events[-1].error_code == "TIMEOUT"


def test_a_model_without_a_live_connection_fails_clearly() -> None:
    runner = InMemoryRunner(agent=LlmAgent(name="plain", model=ScriptedLlm(["x"])))
    queue = immediate_queue()
    rec = Recorder(runner, queue)

    assert rec.done.wait(5)
    assert isinstance(rec.error, ConfigurationError)
    assert "has no live connection" in str(rec.error)


def test_run_live_checks_its_arguments() -> None:
    runner = InMemoryRunner(agent=LlmAgent(name="x", model=ScriptedLiveLlm([])))

    with pytest.raises(ConfigurationError, match="LiveRequestQueue"):
        runner.run_live(user_id="u", session_id="s", live_request_queue=[])  # type: ignore[arg-type]
