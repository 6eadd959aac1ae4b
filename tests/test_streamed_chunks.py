"""A streamed chunk reads the same whichever path carries it to the subscriber.

A plain chunk (partial, with content that calls no function) takes the shortest path there
is: its light event is made in one call and goes past the session writer without a store or
a lock. Every other path (a model callback around the call, a plugin shown every event, a
model on another thread) must give the same events, field by field, in the same order, and
leave the same stored session; and the plain path's events are pinned down below.
"""

from __future__ import annotations

import dataclasses
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

from adk_rx import Event, InMemorySessionService, LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.models import BaseLlm, LlmRequest, LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.plugins import BasePlugin
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import FunctionTool
from tests.reactive_support import ThreadedLlm

pytestmark = pytest.mark.timeout(30)

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
POOL = ThreadPoolScheduler(2)
FIELDS = [f.name for f in dataclasses.fields(Event) if f.name != "timestamp"]


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def _chunk(text: str, **fields: Any) -> LlmResponse:
    return LlmResponse(content=model_content(types.Part(text=text)), partial=True, **fields)


def _call(partial: bool | None = None) -> LlmResponse:
    call = types.FunctionCall(name="add", args={"a": 2, "b": 3}, id="call-1")
    return LlmResponse(content=model_content(types.Part(function_call=call)), partial=partial)


USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=3, total_token_count=5)


def _script() -> list[list[LlmResponse]]:
    """Two streamed model calls: a chunk and its complete text, then a chunk and a partial
    call before the call itself; then text chunks (one with metadata) and the answer."""
    return [
        [
            _chunk("Let"),
            LlmResponse.text("Let"),
            _chunk(" me add"),
            _call(partial=True),
            _call(),
        ],
        [
            _chunk("It is"),
            _chunk(" 5", finish_reason=types.FinishReason.STOP, usage_metadata=USAGE),
            LlmResponse.text("It is 5", turn_complete=True),
        ],
    ]


class _UserLlm(BaseLlm):
    """A user's own model: each call's responses emitted on subscribe."""

    def __init__(self, script: list[list[LlmResponse]]) -> None:
        super().__init__(model="user")
        self.script = list(script)

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        def subscribe(observer: Any, _: Any = None) -> Disposable:
            for response in self.script.pop(0):
                observer.on_next(response)
            observer.on_completed()
            return Disposable()

        return rx.create(subscribe)


class _Shown(BasePlugin):
    """Sees every event (so none may skip the writer's hook)."""

    def __init__(self) -> None:
        super().__init__(name="shown")
        self.seen = 0

    def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        self.seen += 1


def _agent(model: BaseLlm, **callbacks: Any) -> LlmAgent:
    return LlmAgent(name="adder", model=model, tools=[FunctionTool(add)], **callbacks)


PATHS: dict[str, Callable[[], tuple[LlmAgent, list[BasePlugin]]]] = {
    "plain": lambda: (_agent(ScriptedLlm(_script())), []),
    "user model": lambda: (_agent(_UserLlm(_script())), []),
    "model on a thread": lambda: (_agent(ThreadedLlm(ScriptedLlm(_script()))), []),
    "model callback": lambda: (
        _agent(ScriptedLlm(_script()), before_model_callback=lambda *_, **__: None),
        [],
    ),
    "plugin hook": lambda: (_agent(ScriptedLlm(_script())), [_Shown()]),
}


def _fields(events: list[Event]) -> list[dict[str, Any]]:
    """Each event's fields, but its timestamp; ids as the order they first appear in."""
    ids: dict[str, int] = {}
    out = []
    for event in events:
        fields = {name: getattr(event, name) for name in FIELDS}
        fields["id"] = ids.setdefault(event.id, len(ids))
        fields["invocation_id"] = bool(event.invocation_id)
        out.append(fields)
    return out


def _run(path: str, stop_after: int | None = None) -> tuple[list[Event], list[Event]]:
    """(emitted, stored) events of one streamed turn on ``path``."""
    agent, plugins = PATHS[path]()
    service = InMemorySessionService()
    runner = Runner(
        app_name="app", agent=agent, session_service=service, plugins=plugins, io_scheduler=POOL
    )
    session = service.create_session(app_name="app", user_id="u").run()
    emitted: list[Event] = []
    errors: list[Exception] = []
    done = threading.Event()
    events = runner.run_async(
        user_id="u", session_id=session.id, new_message="add 2 and 3", run_config=SSE
    )
    if stop_after is not None:
        events = events.pipe(ops.take(stop_after))

    def failed(error: Exception) -> None:
        errors.append(error)
        done.set()

    events.subscribe(emitted.append, failed, done.set)
    assert done.wait(10)
    assert not errors
    runner.when_idle(user_id="u", session_id=session.id).run()
    found = service.get_session(app_name="app", user_id="u", session_id=session.id).run()
    assert found is not None
    return emitted, list(found.events)


def test_the_plain_path_emits_each_chunk_as_its_model_call_streamed_it() -> None:
    emitted, stored = _run("plain")
    assert [(e.author, e.partial, e.text()) for e in emitted] == [
        ("adder", True, "Let"),
        ("adder", None, "Let"),
        ("adder", True, " me add"),
        ("adder", True, ""),  # the partial call: shown, never run
        ("adder", None, ""),  # the call itself
        ("adder", None, ""),  # its response
        ("adder", True, "It is"),
        ("adder", True, " 5"),
        ("adder", None, "It is 5"),
    ]
    # Chunks share the id of the complete response after them, in the same model call too.
    ids = [e.id for e in emitted]
    assert ids[0] == ids[1] and ids[2] == ids[3] == ids[4] and ids[6] == ids[7] == ids[8]
    assert len({ids[0], ids[2], ids[5], ids[6]}) == 4
    light = [e for e in emitted if e.partial and not e.get_function_calls()]
    assert len(light) == 4 and all(type(e) is not Event for e in light)
    assert type(emitted[3]) is Event  # a partial call keeps the full event
    metadata = emitted[7]
    assert (metadata.finish_reason, metadata.usage_metadata) == (types.FinishReason.STOP, USAGE)
    invocation = {e.invocation_id for e in emitted}
    assert len(invocation) == 1 and all(e.branch is None for e in emitted)
    assert all(e.actions.is_empty() for e in emitted)
    assert [(e.author, e.partial, e.text()) for e in stored] == [
        ("user", None, "add 2 and 3"),
        ("adder", None, "Let"),
        ("adder", None, ""),
        ("adder", None, ""),
        ("adder", None, "It is 5"),
    ]


@pytest.mark.parametrize("path", [p for p in PATHS if p != "plain"])
def test_every_path_gives_the_plain_paths_events_field_by_field(path: str) -> None:
    plain_emitted, plain_stored = _run("plain")
    emitted, stored = _run(path)
    assert _fields(emitted) == _fields(plain_emitted)
    assert _fields(stored) == _fields(plain_stored)
    kinds = [type(e) is Event for e in emitted]
    assert kinds == [type(e) is Event for e in plain_emitted]


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("stop_after", [1, 3, 7])
def test_stopping_inside_a_stream_stops_it_there_on_every_path(path: str, stop_after: int) -> None:
    emitted, stored = _run(path, stop_after)
    plain_emitted, _ = _run("plain")
    assert _fields(emitted) == _fields(plain_emitted[:stop_after])
    assert stored[-1].error_code == "CANCELLED"
