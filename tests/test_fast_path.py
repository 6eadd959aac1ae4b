"""Contract 7: the synchronous path and the asynchronous (Rx) path give the same run.

Every scripted run below goes twice through a Runner: once where everything answers at once
(the scripted model, the in-memory store, tools that never block: the whole turn runs as
plain calls on the subscribing thread), and once with every edge asynchronous (the model
answers on another thread, each store append completes on another thread, tools run on the
I/O pool). Both give the same events in the same order and leave the same stored session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx import (
    Event,
    InMemorySessionService,
    LlmAgent,
    LoopAgent,
    RunConfig,
    Runner,
    SequentialAgent,
    Session,
    StreamingMode,
)
from adk_rx.models import BaseLlm, LlmRequest, LlmResponse
from adk_rx.rx import subscribe_on_eager
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.tools import FunctionTool, exit_loop
from tests.reactive_support import ThreadedLlm

WAIT = 10.0
POOL = ThreadPoolScheduler(2)


class _UserLlm(BaseLlm):
    """A model written as a user writes one: no hint that it answers at once.

    ``how="create"`` emits from ``rx.create`` while subscribed; ``how="of"`` returns
    ``rx.of`` (which emits on the thread's trampoline) from ``rx.defer``.
    """

    def __init__(self, script: list[Any], how: str) -> None:
        super().__init__(model="user")
        self.script, self.how = list(script), how

    def _take(self) -> list[LlmResponse]:
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return [LlmResponse.text(item) if isinstance(item, str) else item]

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        if self.how == "of":
            return rx.defer(lambda _: rx.of(*self._take()))

        def subscribe(observer: Any, _: Any = None) -> Disposable:
            try:
                answer = self._take()
            except Exception as exc:
                observer.on_error(exc)
                return Disposable()
            for response in answer:
                observer.on_next(response)
            observer.on_completed()
            return Disposable()

        return rx.create(subscribe)


class _ThreadedStore(InMemorySessionService):
    """The in-memory store, its appends completing on another thread."""

    def append_event(self, session: Session, event: Event) -> Observable[Event]:
        return super().append_event(session, event).pipe(subscribe_on_eager(POOL))


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def fails(city: str) -> str:
    """Always fails."""
    raise RuntimeError(f"no weather for {city}")


def _call(name: str, **args: Any) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def _tools(fns: list[Callable[..., Any]], inline: bool) -> list[Any]:
    return [FunctionTool(fn, blocking=not inline) for fn in fns]


def _text(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    return LlmAgent(name="solo", model=llm(["hello there"]))


def _tool_turn(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    script = [_call("add", a=2, b=3), _call("fails", city="Oslo"), "2 + 3 = 5"]
    return LlmAgent(name="calc", model=llm(script), tools=_tools([add, fails], inline))


def _transfer(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    billing = LlmAgent(
        name="billing",
        description="Bills.",
        model=llm([_call("add", a=1, b=1), "your bill is 2"]),
        tools=_tools([add], inline),
    )
    return LlmAgent(
        name="router",
        model=llm([_call("transfer_to_agent", agent_name="billing")]),
        sub_agents=[billing],
    )


def _workflow(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> SequentialAgent:
    first = LlmAgent(name="first", model=llm(["draft"]), output_key="draft")
    looped = LlmAgent(
        name="looped",
        model=llm(["again", _call("exit_loop")]),
        tools=[exit_loop],
    )
    return SequentialAgent(
        name="pipeline", sub_agents=[first, LoopAgent(name="loop", sub_agents=[looped])]
    )


def _model_error(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    return LlmAgent(
        name="broken",
        model=llm([_call("add", a=1, b=2), ValueError("model down")]),
        tools=_tools([add], inline),
    )


SCENARIOS = {
    "text": _text,
    "tools": _tool_turn,
    "transfer": _transfer,
    "workflow": _workflow,
    "model error": _model_error,
}


MODELS = ["scripted", "create", "of"]  # the library's fake, and a user's own model two ways


def _run(
    build: Callable[..., Any],
    threaded: bool,
    stop_after: int | None = None,
    model: str = "scripted",
    threaded_store: bool | None = None,
    run_config: RunConfig | None = None,
    pool_tools: bool | None = None,
) -> tuple[list[str], str | None, list[str], list[str]]:
    """(emitted events, error, stored events, threads that delivered) of one turn; the
    store's appends on another thread with ``threaded_store``, tools on the I/O pool with
    ``pool_tools`` (both default to ``threaded``)."""

    def llm(script: list[Any]) -> BaseLlm:
        made = ScriptedLlm(script) if model == "scripted" else _UserLlm(script, model)
        return ThreadedLlm(made) if threaded else made

    agent = build(not (threaded if pool_tools is None else pool_tools), llm)
    threaded_store = threaded if threaded_store is None else threaded_store
    service = _ThreadedStore() if threaded_store else InMemorySessionService()
    runner = Runner(app_name="app", agent=agent, session_service=service, io_scheduler=POOL)
    session = service.create_session(app_name="app", user_id="u").run()
    emitted: list[Event] = []
    error: list[str] = []
    threads: set[str] = set()
    done = threading.Event()
    caller = threading.current_thread()

    def on_next(event: Event) -> None:
        emitted.append(event)
        threads.add("caller" if threading.current_thread() is caller else "other")

    def on_error(exc: Exception) -> None:
        error.append(f"{type(exc).__name__}: {exc}")
        done.set()

    events = runner.run_async(
        user_id="u", session_id=session.id, new_message="go", run_config=run_config
    )
    if stop_after is not None:  # disposes the run from inside the k-th on_next, on both paths
        events = events.pipe(ops.take(stop_after))
    events.subscribe(on_next, on_error, done.set)
    assert done.wait(WAIT)
    runner.when_idle(user_id="u", session_id=session.id).run()
    stored = service.get_session(app_name="app", user_id="u", session_id=session.id).run()
    assert stored is not None
    return (
        simplify_events(emitted),
        error[0] if error else None,
        [*simplify_events(stored.events), f"state: {sorted(stored.state.items())}"],
        sorted(threads),
    )


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_both_paths_give_the_same_events_and_stored_session(name: str, model: str) -> None:
    fast = _run(SCENARIOS[name], threaded=False, model=model)
    rx_path = _run(SCENARIOS[name], threaded=True, model=model)
    assert fast[:3] == rx_path[:3]
    assert fast[3] in ([], ["caller"])  # the fast path never left the subscribing thread
    assert rx_path[3] in ([], ["other"])


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_an_error_comes_after_every_event_stored_before_it(model: str, threaded: bool) -> None:
    # The store answers on another thread, so the step runs ahead of the appends and the model
    # fails while its call and response still wait for theirs: both are emitted, then the error.
    emitted, error, stored, _ = _run(
        _model_error, threaded=threaded, model=model, threaded_store=True
    )
    assert error is not None and error.endswith("ValueError: model down")
    assert emitted == stored[1:-1]  # all but the user's message and the state line
    assert len(emitted) == 2


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("stop_after", [1, 2, 3])
def test_cancelling_after_k_events_leaves_the_same_session_on_both_paths(
    stop_after: int, model: str
) -> None:
    fast = _run(_tool_turn, threaded=False, stop_after=stop_after, model=model)
    rx_path = _run(_tool_turn, threaded=True, stop_after=stop_after, model=model)
    assert fast[0] == rx_path[0]
    assert fast[2] == rx_path[2]
    assert fast[2][-2].endswith("[CANCELLED]")


def test_the_scenarios_cover_tools_transfer_workflows_and_errors() -> None:
    tool = _run(_tool_turn, threaded=False)
    assert any("FunctionResponse(fails" in e and "no weather" in e for e in tool[0])
    assert _run(_transfer, threaded=False)[0][-1] == "billing: your bill is 2"
    assert "first: draft" in _run(_workflow, threaded=False)[0]
    assert "model down" in (_run(_model_error, threaded=False)[1] or "")


class _CachedLlm(BaseLlm):
    """The model page's example: answers from a cache when it can, else asks the inner model."""

    def __init__(self, inner: BaseLlm, cache: dict[str, list[LlmResponse]]) -> None:
        super().__init__(model=inner.model)
        self.inner, self.cache = inner, cache
        self.asked_inner = 0

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        hit = self.cache.get(llm_request.contents[-1].parts[0].text or "")  # type: ignore[index]
        if hit is not None:
            return rx.of(*hit)
        self.asked_inner += 1
        return self.inner.generate_content(llm_request, stream)


def test_a_model_of_ones_own_answers_now_when_it_can_and_is_subscribed_otherwise() -> None:
    cached = _CachedLlm(
        ThreadedLlm(ScriptedLlm(["from the network"])),
        {"cached question": [LlmResponse.text("from the cache")]},
    )
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="solo", model=cached),
        session_service=InMemorySessionService(),
    )
    session = runner.session_service.create_session(app_name="app", user_id="u").run()
    caller = threading.current_thread()
    threads: list[bool] = []

    def texts(message: str) -> list[str]:
        events = runner.run_async(user_id="u", session_id=session.id, new_message=message)
        out = events.pipe(
            ops.do_action(lambda _: threads.append(threading.current_thread() is caller)),
            ops.to_list(),
        ).run()
        return simplify_events(out)

    assert texts("cached question") == ["solo: from the cache"]
    assert cached.asked_inner == 0 and threads == [True]  # plain calls on the caller's thread
    assert texts("anything else") == ["solo: from the network"]
    assert cached.asked_inner == 1 and threads[-1] is False  # the network edge, on its thread


def test_a_tool_of_ones_own_runs_inline_when_it_answers_at_once_else_on_its_edge() -> None:
    from adk_rx.tools import BaseTool

    class Counter(BaseTool):
        """Counts; answers while subscribed (inline) or from the I/O pool."""

        def __init__(self, inline: bool) -> None:
            super().__init__(name="count", parameters={"type": "object", "properties": {}})
            self.inline = inline
            self.threads: list[str] = []

        def count(self) -> dict[str, int]:
            self.threads.append(threading.current_thread().name)
            return {"count": len(self.threads)}

        def run_async(self, *, args: Any, tool_context: Any) -> Observable[Any]:
            if self.inline:
                return rx.defer(lambda _: rx.just(self.count()))
            return rx.defer(lambda _: rx.just(self.count())).pipe(subscribe_on_eager(POOL))

    for inline in (True, False):
        tool = Counter(inline)
        agent = LlmAgent(name="solo", model=ScriptedLlm([_call("count"), "counted"]), tools=[tool])
        runner = Runner(
            app_name="app", agent=agent, session_service=InMemorySessionService(), io_scheduler=POOL
        )
        session = runner.session_service.create_session(app_name="app", user_id="u").run()
        events = runner.run_async(user_id="u", session_id=session.id, new_message="go")
        got = simplify_events(events.pipe(ops.to_list()).run())
        assert got == [
            "solo: FunctionCall(count, {})",
            'solo: FunctionResponse(count, {"count": 1})',
            "solo: counted",
        ]
        on_caller = tool.threads == [threading.current_thread().name]
        assert on_caller is inline


def test_a_tool_of_ones_own_that_answers_at_once_is_not_kept_subscribed() -> None:
    from adk_rx.flows.tool_call import Call, run_call
    from adk_rx.rx._engine.sync import is_sync
    from adk_rx.tools import BaseTool

    class Echo(BaseTool):
        """Answers with rx.of, the way a user writes it."""

        def run_async(self, *, args: Any, tool_context: Any) -> Observable[Any]:
            return rx.of({"echo": dict(args)})

    seen: list[bool] = []

    def probe(tool_context: Any) -> None:
        ctx = tool_context.invocation_context
        call = types.FunctionCall(id="c1", name="echo", args={"a": 1})
        item = Call(call, Echo(name="echo"), type(tool_context)(ctx, function_call_id="c1"))
        answered = run_call(ctx.agent, ctx, item)
        seen.append(is_sync(answered))
        assert answered.pipe(ops.to_list()).run() == [{"echo": {"a": 1}}]

    agent = LlmAgent(
        name="solo",
        model=ScriptedLlm([_call("probe"), "done"]),
        tools=[FunctionTool(probe, blocking=False)],
    )
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    session = runner.session_service.create_session(app_name="app", user_id="u").run()
    runner.run_async(user_id="u", session_id=session.id, new_message="go").pipe(ops.to_list()).run()
    assert seen == [True]  # settled inside the running turn, where rx.of would otherwise queue


# -- the Runner's own driver of a plain LlmAgent turn (adk_rx/runner/plain_turn.py) ----------


@pytest.fixture
def generic_body(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Makes every turn run the generic body (agent.run_async under the session writer)."""

    def off() -> None:
        monkeypatch.setattr("adk_rx.runner.invocation.plain_turn", lambda *_: None)

    return off


def _keeper(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    script = [_call("add", a=2, b=2), "four"]
    return LlmAgent(name="keeper", model=llm(script), tools=_tools([add], inline), output_key="k")


def _budget(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    script = [_call("add", a=1, b=1), _call("add", a=2, b=2), "done"]
    return LlmAgent(name="spender", model=llm(script), tools=_tools([add], inline))


def _missing_target(inline: bool, llm: Callable[[list[Any]], BaseLlm]) -> LlmAgent:
    script = [_call("transfer_to_agent", agent_name="nobody"), "no such agent"]
    return LlmAgent(name="lost", model=llm(script))


DRIVER_SCENARIOS = {
    **SCENARIOS,
    "output key": _keeper,
    "budget": _budget,
    "missing transfer target": _missing_target,
}
RUN_CONFIGS = {"budget": RunConfig(max_llm_calls=2)}
# (model on another thread, store appends on another thread, tools on the I/O pool): every
# point where the driver waits and resumes, or a sink takes over its writes
EDGES = [
    (False, False, False),
    (True, True, True),
    (False, True, False),
    (True, False, True),
    (False, False, True),
    (False, True, True),
    (True, False, False),
]


def _both(
    name: str, model: str, edges: tuple[bool, bool, bool], stop_after: int | None = None
) -> Any:
    threaded, threaded_store, pool_tools = edges
    return _run(
        DRIVER_SCENARIOS[name],
        threaded=threaded,
        threaded_store=threaded_store,
        pool_tools=pool_tools,
        model=model,
        stop_after=stop_after,
        run_config=RUN_CONFIGS.get(name),
    )


@pytest.mark.parametrize("edges", EDGES)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", sorted(DRIVER_SCENARIOS))
def test_the_runners_driver_gives_the_generic_bodys_run(
    name: str, model: str, edges: tuple[bool, bool, bool], generic_body: Callable[[], None]
) -> None:
    driven = _both(name, model, edges)
    generic_body()
    assert driven[:3] == _both(name, model, edges)[:3]


@pytest.mark.parametrize("edges", EDGES)
@pytest.mark.parametrize("stop_after", [1, 2, 3])
@pytest.mark.parametrize("name", ["tools", "output key"])
def test_the_runners_driver_stops_at_event_k_as_the_generic_body(
    name: str, stop_after: int, edges: tuple[bool, bool, bool], generic_body: Callable[[], None]
) -> None:
    driven = _both(name, "scripted", edges, stop_after)
    generic_body()
    generic = _both(name, "scripted", edges, stop_after)
    assert driven[0] == generic[0] and len(driven[0]) == stop_after
    assert driven[2] == generic[2]


def test_the_runners_driver_streams_chunks_as_the_generic_body(
    generic_body: Callable[[], None],
) -> None:
    chunks = [LlmResponse.text("he", partial=True), LlmResponse.text("llo", partial=True)]
    sse = RunConfig(streaming_mode=StreamingMode.SSE)

    def streamed() -> tuple[list[tuple[str, bool | None]], list[str]]:
        model = ScriptedLlm([[*chunks, LlmResponse.text("hello")]])
        runner = Runner(
            app_name="app",
            agent=LlmAgent(name="solo", model=model, output_key="said"),
            session_service=InMemorySessionService(),
        )
        session = runner.session_service.create_session(app_name="app", user_id="u").run()
        events = runner.run_async(
            user_id="u", session_id=session.id, new_message="go", run_config=sse
        )
        got = events.pipe(ops.to_list()).run()
        stored = runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        ).run()
        assert stored is not None and stored.state["said"] == "hello"
        return [(e.text(), e.partial) for e in got], simplify_events(stored.events)

    driven = streamed()
    assert [partial for _, partial in driven[0]] == [True, True, None]
    generic_body()
    assert driven == streamed()


def test_a_plain_turn_is_driven_by_the_runner_and_a_hooked_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from adk_rx.plugins import BasePlugin
    from adk_rx.runner import plain_turn as module

    chosen: list[bool] = []
    real = module.plain_turn

    def spy(*args: Any) -> Any:
        driver = real(*args)
        chosen.append(driver is not None)
        return driver

    monkeypatch.setattr("adk_rx.runner.invocation.plain_turn", spy)

    class Seen(BasePlugin):
        def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
            return None

    for plugins in ([], [Seen(name="seen")]):
        runner = Runner(
            app_name="app",
            agent=LlmAgent(name="solo", model=ScriptedLlm(["hi"])),
            session_service=InMemorySessionService(),
            plugins=plugins,
        )
        session = runner.session_service.create_session(app_name="app", user_id="u").run()
        runner.run_async(user_id="u", session_id=session.id, new_message="go").pipe(
            ops.to_list()
        ).run()
    assert chosen == [True, False]


class _GatedLlm(BaseLlm):
    """Answers its script on another thread once ``gate`` opens; ``asked`` is set when a call
    waits there."""

    def __init__(self, script: list[Any], gate: threading.Event, asked: threading.Event) -> None:
        super().__init__(model="gated")
        self.inner, self.gate, self.asked = ScriptedLlm(script), gate, asked

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        answer = self.inner.generate_content(llm_request, stream)

        def wait_then(observer: Any, _: Any = None) -> Disposable:
            def answer_later() -> None:
                self.asked.set()
                self.gate.wait(WAIT)
                answer.subscribe(observer)

            threading.Thread(target=answer_later).start()
            return Disposable()

        return rx.create(wait_then)


@pytest.mark.parametrize("waiting_on", ["model", "tool", "second model call"])
def test_the_runners_driver_cancelled_while_it_waits_leaves_the_generic_bodys_session(
    waiting_on: str, generic_body: Callable[[], None]
) -> None:
    def cancelled_while_waiting() -> tuple[list[str], list[str]]:
        gate, asked = threading.Event(), threading.Event()

        def slow_add(a: int, b: int) -> int:
            """Adds, once the gate opens (at once when the second model call waits)."""
            if waiting_on == "tool":
                asked.set()
                gate.wait(WAIT)
            return a + b

        script = [_call("slow_add", a=1, b=2), "3"]
        if waiting_on == "model":
            model: BaseLlm = _GatedLlm(script, gate, asked)
        else:
            model = ScriptedLlm(script)
        if waiting_on == "second model call":  # the first call answers at once
            first = ScriptedLlm(script[:1])
            second = _GatedLlm(script[1:], gate, asked)
            model = _Switch([first, second])
        agent = LlmAgent(name="calc", model=model, tools=[FunctionTool(slow_add, blocking=True)])
        service = InMemorySessionService()
        runner = Runner(app_name="app", agent=agent, session_service=service, io_scheduler=POOL)
        session = service.create_session(app_name="app", user_id="u").run()
        emitted: list[Event] = []
        subscription = runner.run_async(user_id="u", session_id=session.id, new_message="go")
        handle = subscription.subscribe(emitted.append)
        assert asked.wait(WAIT)  # the run waits on its model or tool now
        handle.dispose()
        gate.set()
        runner.when_idle(user_id="u", session_id=session.id).run()
        stored = service.get_session(app_name="app", user_id="u", session_id=session.id).run()
        assert stored is not None
        return simplify_events(emitted), simplify_events(stored.events)

    driven = cancelled_while_waiting()
    assert driven[1][-1].endswith("[CANCELLED]")
    generic_body()
    assert driven == cancelled_while_waiting()


class _Switch(BaseLlm):
    """Each call to the next model of ``models``."""

    def __init__(self, models: list[BaseLlm]) -> None:
        super().__init__(model="switch")
        self.models = models

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        return self.models.pop(0).generate_content(llm_request, stream)
