"""Shared fakes and helpers for the runtime-spine tests (agents, runner, plugins, flows).

No mocks: real in-memory services, ScriptedLlm, and a small agent that replays text events.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import (
    BaseAgent,
    Event,
    InMemorySessionService,
    InvocationContext,
    Runner,
    Session,
)
from adk_rx.models.llm_response import LlmResponse
from adk_rx.services import InvocationServices

APP = "test_app"
USER = "test_user"


def text(value: str, role: str = "user") -> types.Content:
    """A one-part text content."""
    return types.Content(role=role, parts=[types.Part(text=value)])


def call_response(name: str, args: dict[str, Any] | None = None, call_id: str = "") -> LlmResponse:
    """A model response asking for one function call."""
    call = types.FunctionCall(name=name, args=args or {}, id=call_id or None)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class ReplayAgent(BaseAgent):
    """A custom agent that emits one text event per item of ``texts`` and records its runs."""

    texts: tuple[str, ...]
    runs: list[InvocationContext]

    def __init__(self, *, name: str, texts: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        object.__setattr__(self, "texts", tuple(texts))
        object.__setattr__(self, "runs", [])

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        self.runs.append(ctx)
        return rx.from_iterable(
            [
                Event(
                    author=self.name,
                    invocation_id=ctx.invocation_id,
                    branch=ctx.branch,
                    content=text(t, role="model"),
                )
                for t in self.texts
            ]
        )


def new_context(
    agent: BaseAgent, service: InMemorySessionService | None = None, **kwargs: Any
) -> InvocationContext:
    """An invocation context on a fresh in-memory session (no Runner, no persistence).

    Keyword arguments naming a field of InvocationServices go to the context's services.
    """
    service = service or InMemorySessionService()
    session = service.create_session(app_name=APP, user_id=USER).run()
    return InvocationContext(
        session=session,
        agent=agent,
        services=services_of(service, kwargs),
        user_content=text("user content"),
        **kwargs,
    )


def services_of(service: InMemorySessionService, kwargs: dict[str, Any]) -> InvocationServices:
    """Services on ``service`` with the fields ``kwargs`` names (taken out of it)."""
    names = {f.name for f in dataclasses.fields(InvocationServices)}
    given = {name: kwargs.pop(name) for name in list(kwargs) if name in names}
    return InvocationServices(session_service=service, **given)


def collect(observable: Observable[Any]) -> list[Any]:
    """Every item of a finite Observable (blocks; re-raises its error)."""
    return observable.pipe(ops.to_list()).run()


def run_agent(agent: BaseAgent, ctx: InvocationContext) -> list[Event]:
    """Runs ``agent`` directly, applying each event to the session view like the Runner."""
    return collect(agent.run_async(ctx).pipe(ops.do_action(ctx.session.apply)))


def new_runner(agent: BaseAgent, **kwargs: Any) -> Runner:
    """A Runner on a fresh in-memory session service."""
    kwargs.setdefault("session_service", InMemorySessionService())
    return Runner(app_name=APP, agent=agent, **kwargs)


def create_session(runner: Runner, session_id: str = "s1", **kwargs: Any) -> Session:
    """Creates a session (for the test user unless ``user_id`` is given)."""
    kwargs.setdefault("user_id", USER)
    return runner.session_service.create_session(
        app_name=APP, session_id=session_id, **kwargs
    ).run()


def stored(runner: Runner, session_id: str = "s1", user_id: str = USER) -> Session:
    """The session as the service holds it now."""
    found = collect(
        runner.session_service.get_session(app_name=APP, user_id=user_id, session_id=session_id)
    )
    assert found, f"session {session_id!r} is not stored"
    return found[0]


def turn(runner: Runner, message: str, session_id: str = "s1", **kwargs: Any) -> list[Event]:
    """Runs one turn and returns the emitted events."""
    user_id = kwargs.pop("user_id", USER)
    return collect(
        runner.run_async(
            user_id=user_id, session_id=session_id, new_message=text(message), **kwargs
        )
    )


def raising(exc: BaseException) -> Callable[..., Any]:
    """A callback that raises ``exc`` whatever it is called with."""

    def callback(*_: Any, **__: Any) -> Any:
        raise exc

    return callback
