"""Runner: cold runs, apply -> persist -> emit, per-session serialization, state scopes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

from adk_rx import (
    CallbackContext,
    ConfigurationError,
    Event,
    InMemoryRunner,
    InMemorySessionService,
    LlmAgent,
    LlmResponse,
    ModelError,
    RunConfig,
    Session,
    SessionNotFoundError,
    StreamingMode,
)
from adk_rx.errors import CallbackError
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import (
    APP,
    USER,
    call_response,
    collect,
    create_session,
    new_runner,
    raising,
    stored,
    text,
    turn,
)


class CountingSessionService(InMemorySessionService):
    """The in-memory service, counting subscriptions; can delay appends on a timer thread."""

    def __init__(self, append_delay: float | None = None, delay_only_first: bool = False) -> None:
        super().__init__()
        self.get_calls = 0
        self.appended: list[Event] = []
        self._delay = append_delay
        self._delay_only_first = delay_only_first

    def get_session(self, **kwargs: Any) -> Observable[Session]:
        def count(_: Any) -> Observable[Session]:
            self.get_calls += 1
            return super(CountingSessionService, self).get_session(**kwargs)

        return rx.defer(count)

    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        inner = super().append_event(session, event)

        def record(_: Any) -> Observable[Event]:
            self.appended.append(event)
            delayed = self._delay is not None and (
                not self._delay_only_first or len(self.appended) == 2  # first agent event
            )
            if delayed:
                return rx.timer(self._delay).pipe(ops.flat_map(lambda _: inner))
            return inner

        return rx.defer(record)


def echo_tool(message: str) -> dict[str, Any]:
    """Echoes the message.

    Args:
        message: what to echo.
    """
    return {"echo": message}


# -- cold ---------------------------------------------------------------------------------


def test_building_run_async_does_no_work() -> None:
    llm = ScriptedLlm(["hi"])
    service = CountingSessionService()
    runner = new_runner(LlmAgent(name="agent", model=llm), session_service=service)
    runner.run_async(
        user_id=USER,
        session_id="s1",
        new_message=text("hello"),
        run_config=RunConfig(auto_create_session=True),
    )
    assert llm.requests == []
    assert service.get_calls == 0
    assert collect(service.list_sessions(app_name=APP, user_id=USER))[0].sessions == []


def test_subscribing_twice_runs_twice_with_new_invocation_ids_and_model_calls() -> None:
    llm = ScriptedLlm(["first", "second"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    create_session(runner)
    events = runner.run_async(user_id=USER, session_id="s1", new_message=text("hello"))
    first, second = collect(events), collect(events)
    assert simplify_events(first + second) == ["agent: first", "agent: second"]
    assert first[0].invocation_id != second[0].invocation_id
    assert first[0].invocation_id.startswith("e-")
    assert len(llm.requests) == 2
    assert simplify_events(stored(runner).events) == [
        "user: hello",
        "agent: first",
        "user: hello",
        "agent: second",
    ]


# -- apply -> persist -> emit ---------------------------------------------------------------


def test_every_received_event_is_already_in_the_session_service() -> None:
    llm = ScriptedLlm([call_response("echo_tool", {"message": "hi"}), "done"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        tools=[echo_tool],
        after_agent_callback=lambda cc: cc.state.update({"after": True}),
    )
    runner = new_runner(agent)
    create_session(runner)
    checked: list[bool] = []

    def on_next(event: Event) -> None:
        checked.append(event.id in {e.id for e in stored(runner).events})

    done = threading.Event()
    runner.run_async(user_id=USER, session_id="s1", new_message=text("go")).subscribe(
        on_next, lambda e: done.set(), done.set
    )
    assert done.wait(5)
    assert checked == [True, True, True, True]


def test_user_message_is_persisted_first_and_not_emitted() -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm(["hi there"])))
    create_session(runner)
    events = turn(runner, "hello")
    assert simplify_events(events) == ["agent: hi there"]
    session = stored(runner)
    assert simplify_events(session.events) == ["user: hello", "agent: hi there"]
    assert session.events[0].invocation_id == events[0].invocation_id


def test_output_key_value_is_in_the_persisted_state() -> None:
    """Scenario 20."""
    runner = new_runner(
        LlmAgent(name="agent", model=ScriptedLlm(["Saved output"]), output_key="myOutput")
    )
    create_session(runner)
    turn(runner, "hello")
    assert stored(runner).state["myOutput"] == "Saved output"


def test_append_is_called_once_per_event_and_get_session_once_per_run() -> None:
    """Scenario 53."""
    service = CountingSessionService()
    llm = ScriptedLlm([call_response("echo_tool", {"message": "a"}), "done"])
    runner = new_runner(
        LlmAgent(name="agent", model=llm, tools=[echo_tool]), session_service=service
    )
    create_session(runner)
    events = turn(runner, "go")
    assert len(events) == 3
    assert [e.id for e in service.appended][1:] == [e.id for e in events]
    assert len(service.appended) == 1 + len(events)
    assert service.get_calls == 1


def test_events_are_emitted_and_stored_in_order_when_an_append_is_slow() -> None:
    """Scenario 54."""
    service = CountingSessionService(append_delay=0.05, delay_only_first=True)
    llm = ScriptedLlm([call_response("echo_tool", {"message": "a"}), "done"])
    runner = new_runner(
        LlmAgent(name="agent", model=llm, tools=[echo_tool]), session_service=service
    )
    create_session(runner)
    events = turn(runner, "go")
    assert simplify_events(events) == [
        'agent: FunctionCall(echo_tool, {"message": "a"})',
        'agent: FunctionResponse(echo_tool, {"echo": "a"})',
        "agent: done",
    ]
    assert [e.id for e in stored(runner).events[1:]] == [e.id for e in events]


def test_partial_events_are_emitted_but_never_stored() -> None:
    """Scenario 54."""
    service = CountingSessionService()
    runner = new_runner(
        LlmAgent(name="agent", model=ScriptedLlm([["Hel", "lo"]])), session_service=service
    )
    create_session(runner)
    events = turn(runner, "hi", run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert [(e.partial, e.text()) for e in events] == [(True, "Hel"), (True, "lo"), (None, "Hello")]
    assert simplify_events(stored(runner).events) == ["user: hi", "agent: Hello"]
    assert not any(e.partial for e in service.appended)


def test_next_model_step_sees_the_function_response_even_when_appends_are_slow() -> None:
    """Scenario 55."""
    service = CountingSessionService(append_delay=0.02)
    llm = ScriptedLlm([call_response("echo_tool", {"message": "a"}), "done"])
    runner = new_runner(
        LlmAgent(name="agent", model=llm, tools=[echo_tool]), session_service=service
    )
    create_session(runner)
    turn(runner, "go")
    assert len(llm.requests) == 2
    assert any(
        part.function_response is not None
        for content in llm.requests[1].contents
        for part in content.parts or []
    )


def test_after_agent_state_write_is_persisted_as_a_state_only_event() -> None:
    """Scenario 58."""
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm(["hi"]),
        after_agent_callback=lambda cc: cc.state.update({"key": "value"}),
    )
    runner = new_runner(agent)
    create_session(runner)
    turn(runner, "go")
    session = stored(runner)
    assert simplify_events(session.events) == ["user: go", "agent: hi", "agent: [NO_CONTENT]"]
    assert session.state["key"] == "value"


# -- state_delta (scenario 57) ----------------------------------------------------------------


def test_state_delta_rides_on_the_user_event_and_merges_with_existing_state() -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm(["ok"])))
    create_session(runner, state={"existing": 1})
    turn(runner, "go", state_delta={"k": "v"})
    session = stored(runner)
    assert session.state == {"existing": 1, "k": "v"}
    assert dict(session.events[0].actions.state_delta) == {"k": "v"}
    assert simplify_events(session.events) == ["user: go", "agent: ok"]


def test_empty_state_delta_leaves_the_state_unchanged() -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm(["ok"])))
    create_session(runner)
    turn(runner, "go", state_delta={})
    session = stored(runner)
    assert session.state == {}
    assert session.events[0].actions.is_empty()


def test_state_delta_is_visible_to_the_agent_of_the_same_run() -> None:
    llm = ScriptedLlm(["ok"])
    runner = new_runner(LlmAgent(name="agent", model=llm, instruction="Mood: {mood}"))
    create_session(runner)
    turn(runner, "go", state_delta={"mood": "cheerful"})
    assert "Mood: cheerful" in llm.requests[0].system_instruction_text()


# -- sessions -------------------------------------------------------------------------------


def test_missing_session_fails_with_session_not_found_and_creates_nothing() -> None:
    """Scenario 59."""
    llm = ScriptedLlm(["never"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    with pytest.raises(SessionNotFoundError, match="auto_create_session"):
        turn(runner, "hi", session_id="nope")
    assert llm.requests == []
    assert (
        collect(runner.session_service.get_session(app_name=APP, user_id=USER, session_id="nope"))
        == []
    )


def test_auto_create_session_creates_the_missing_session() -> None:
    """Scenario 59."""
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm(["hi"])))
    events = turn(runner, "hello", session_id="new", run_config=RunConfig(auto_create_session=True))
    assert simplify_events(events) == ["agent: hi"]
    assert simplify_events(stored(runner, "new").events) == ["user: hello", "agent: hi"]


def test_app_and_user_state_is_shared_across_sessions_of_the_app_and_user() -> None:
    def remember(cc: CallbackContext) -> None:
        cc.state["app:theme"] = "dark"
        cc.state["user:lang"] = "fr"
        cc.state["own"] = 1

    runner = new_runner(
        LlmAgent(name="agent", model=ScriptedLlm(["ok"]), before_agent_callback=remember)
    )
    create_session(runner, "s1")
    create_session(runner, "s2")
    create_session(runner, "s3", user_id="other")
    turn(runner, "go", "s1")
    assert stored(runner, "s2").state == {"app:theme": "dark", "user:lang": "fr"}
    assert stored(runner, "s3", user_id="other").state == {"app:theme": "dark"}
    create_session(runner, "s4")
    assert stored(runner, "s4").state == {"app:theme": "dark", "user:lang": "fr"}


def test_temp_state_is_visible_within_the_invocation_and_never_persisted() -> None:
    def scratch(cc: CallbackContext) -> None:
        if "temp:scratch" not in cc.state:
            cc.state["temp:scratch"] = "draft"

    llm = ScriptedLlm(["one"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        instruction="Scratch: [{temp:scratch?}]",
        before_agent_callback=scratch,
    )
    runner = new_runner(agent)
    create_session(runner)
    turn(runner, "go")
    assert "Scratch: [draft]" in llm.requests[0].system_instruction_text()
    session = stored(runner)
    assert "temp:scratch" not in session.state
    assert all("temp:scratch" not in e.actions.state_delta for e in session.events)
    reader_llm = ScriptedLlm(["x"])
    reader = LlmAgent(name="agent", model=reader_llm, instruction="Scratch: [{temp:scratch?}]")
    turn(new_runner(reader, session_service=runner.session_service), "again")
    assert "Scratch: []" in reader_llm.requests[0].system_instruction_text()


# -- per-session serialization (scenario 56) ------------------------------------------------


class Outcome:
    """Collects one subscription's events and how it ended."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self.done = threading.Event()

    def subscribe(self, observable: Observable[Event]) -> Outcome:
        def fail(error: BaseException) -> None:
            self.error = error
            self.done.set()

        observable.subscribe(self.events.append, fail, self.done.set)
        return self


def test_second_run_on_a_session_starts_after_the_first_and_sees_its_events() -> None:
    gate: Subject[LlmResponse] = Subject()
    llm = ScriptedLlm([lambda request: gate, "reply 2"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    create_session(runner)
    first = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("message 1"))
    )
    second = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("message 2"))
    )
    assert len(llm.requests) == 1
    assert simplify_events(stored(runner).events) == ["user: message 1"]
    gate.on_next(LlmResponse.text("reply 1"))
    gate.on_completed()
    assert first.done.wait(5) and second.done.wait(5)
    assert (first.error, second.error) == (None, None)
    assert simplify_events(second.events) == ["agent: reply 2"]
    seen = [c.parts[0].text for c in llm.requests[1].contents]
    assert seen == ["message 1", "reply 1", "message 2"]


def test_second_run_on_a_session_still_runs_when_the_first_fails() -> None:
    gate: Subject[LlmResponse] = Subject()
    llm = ScriptedLlm([lambda request: gate, "reply 2"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    create_session(runner)
    first = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("message 1"))
    )
    second = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("message 2"))
    )
    assert len(llm.requests) == 1
    gate.on_error(RuntimeError("model down"))
    assert first.done.wait(5) and second.done.wait(5)
    assert isinstance(first.error, ModelError)
    assert second.error is None
    assert simplify_events(second.events) == ["agent: reply 2"]


def test_runs_on_different_sessions_do_not_wait_for_each_other() -> None:
    gate: Subject[LlmResponse] = Subject()
    llm = ScriptedLlm([lambda request: gate, "other reply"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    create_session(runner, "s1")
    create_session(runner, "s2")
    first = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("slow"))
    )
    assert simplify_events(turn(runner, "fast", "s2")) == ["agent: other reply"]
    assert not first.done.is_set()
    gate.on_next(LlmResponse.text("slow reply"))
    gate.on_completed()
    assert first.done.wait(5)


# -- run() and run_events() ---------------------------------------------------------------


def test_run_is_a_blocking_iterator_over_the_events() -> None:
    runner = InMemoryRunner(LlmAgent(name="agent", model=ScriptedLlm(["hi"])), app_name=APP)
    create_session(runner)
    events = list(runner.run(user_id=USER, session_id="s1", new_message=text("hello")))
    assert simplify_events(events) == ["agent: hi"]
    assert simplify_events(stored(runner).events) == ["user: hello", "agent: hi"]


def test_leaving_run_early_cancels_and_frees_the_session_for_the_next_turn() -> None:
    # The first call streams one chunk and then never finishes: only disposal ends it.
    stalled = rx.concat(rx.just(LlmResponse.text("Hel", partial=True)), rx.never())
    llm = ScriptedLlm([lambda request: stalled, "next"])
    runner = new_runner(LlmAgent(name="agent", model=llm))
    create_session(runner)
    sse = RunConfig(streaming_mode=StreamingMode.SSE)
    for event in runner.run(user_id=USER, session_id="s1", new_message=text("go"), run_config=sse):
        assert event.partial
        break
    assert simplify_events(turn(runner, "again")) == ["agent: next"]
    assert simplify_events(stored(runner).events) == [
        "user: go",
        "agent: [CANCELLED]",
        "user: again",
        "agent: next",
    ]


def test_run_events_is_an_async_iterator_over_the_events() -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm(["hi"])))
    create_session(runner)

    async def main() -> list[Event]:
        return [
            e
            async for e in runner.run_events(
                user_id=USER, session_id="s1", new_message=text("hello")
            )
        ]

    assert simplify_events(asyncio.run(main())) == ["agent: hi"]
    assert simplify_events(stored(runner).events) == ["user: hello", "agent: hi"]


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("user_id", 1),
        ("user_id", ""),
        ("session_id", None),
        ("new_message", 42),
        ("new_message", types.Content(role="user", parts=[])),
        ("run_config", "fast"),
        ("state_delta", 5),
        ("state_delta", ["k", "v"]),
    ],
)
def test_wrong_arguments_to_run_async_raise_configuration_error_at_call_time(
    field: str, value: Any
) -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm()))
    kwargs: dict[str, Any] = {"user_id": USER, "session_id": "s1", "new_message": text("hi")}
    kwargs[field] = value
    with pytest.raises(ConfigurationError, match=field):
        runner.run_async(**kwargs)


def test_runner_rejects_an_agent_that_is_not_an_agent() -> None:
    with pytest.raises(ConfigurationError, match="BaseAgent"):
        new_runner("agent")  # type: ignore[arg-type]


def test_raising_callback_fails_the_run_and_keeps_the_session_as_last_persisted() -> None:
    llm = ScriptedLlm(["answer"])
    agent = LlmAgent(
        name="agent",
        model=llm,
        output_key="out",
        after_agent_callback=raising(RuntimeError("after broke")),
    )
    runner = new_runner(agent)
    create_session(runner)
    outcome = Outcome().subscribe(
        runner.run_async(user_id=USER, session_id="s1", new_message=text("go"))
    )
    assert outcome.done.wait(5)
    assert isinstance(outcome.error, CallbackError)
    assert "after broke" in str(outcome.error)
    session = stored(runner)
    assert [e.id for e in session.events[1:]] == [e.id for e in outcome.events]
    assert simplify_events(session.events) == ["user: go", "agent: answer"]
    assert session.state == {"out": "answer"}


def test_failing_model_errors_the_run_with_model_error_and_keeps_the_user_message() -> None:
    runner = new_runner(LlmAgent(name="agent", model=ScriptedLlm([ConnectionError("down")])))
    create_session(runner)
    with pytest.raises(ModelError, match="down"):
        turn(runner, "go")
    assert simplify_events(stored(runner).events) == ["user: go"]


def test_runner_recovers_from_a_model_error_through_on_model_error() -> None:
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([ConnectionError("down")]),
        on_model_error_callback=lambda cc, req, err: LlmResponse.text("fallback"),
    )
    runner = new_runner(agent)
    create_session(runner)
    assert simplify_events(turn(runner, "go")) == ["agent: fallback"]
    assert simplify_events(stored(runner).events) == ["user: go", "agent: fallback"]


def test_a_run_config_that_is_not_a_run_config_is_rejected_at_call_time() -> None:
    runner = InMemoryRunner(agent=LlmAgent(name="bot", model=ScriptedLlm(["hi"])))
    with pytest.raises(ConfigurationError, match="run_config"):
        runner.run_async(user_id="u", session_id="s", new_message="hi", run_config="")  # type: ignore[arg-type]


def test_a_model_callback_returning_the_wrong_type_errors_with_callback_error() -> None:
    agent = LlmAgent(
        name="bot", model=ScriptedLlm(["hi"]), before_model_callback=lambda ctx, req: "oops"
    )
    runner = InMemoryRunner(agent=agent)
    with pytest.raises(CallbackError, match="before_model_callback"):
        list(
            runner.run(
                user_id="u",
                session_id="s",
                new_message="hi",
                run_config=RunConfig(auto_create_session=True),
            )
        )


# -- blocking callers ---------------------------------------------------------------------


def test_when_idle_runs_and_awaits_to_none() -> None:
    runner = new_runner(LlmAgent(name="a", model=ScriptedLlm(["hi"])))
    create_session(runner)
    collect(runner.run_async(user_id=USER, session_id="s1", new_message=text("hello")))
    assert runner.when_idle(user_id=USER, session_id="s1").run() is None

    async def awaited() -> object:
        return await runner.when_idle(user_id=USER, session_id="s1")

    assert asyncio.run(awaited()) is None


def test_run_of_a_failing_run_raises_its_error() -> None:
    runner = new_runner(LlmAgent(name="a", model=ScriptedLlm([ValueError("boom")])))
    create_session(runner)
    with pytest.raises(ModelError, match="boom"):
        runner.run_async(user_id=USER, session_id="s1", new_message=text("hello")).run()
