"""Helpers for tests that run agents through a Runner with a ScriptedLlm."""

from __future__ import annotations

from typing import Any

from google.genai import types
from reactivex import operators as ops

from adk_rx import BaseAgent, Event, InMemoryRunner, RunConfig, Session
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.plugins import BasePlugin

USER = "u1"
SESSION = "s1"


def call(name: str, args: dict[str, Any] | None = None, call_id: str | None = None) -> types.Part:
    """A function-call part."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args or {}, id=call_id))


def calls(*parts: types.Part | str, partial: bool | None = None) -> LlmResponse:
    """One model response made of function-call parts (and text for str items)."""
    built = [types.Part(text=p) if isinstance(p, str) else p for p in parts]
    return LlmResponse(content=types.Content(role="model", parts=built), partial=partial)


def user_response(call_id: str, name: str, response: dict[str, Any]) -> types.Content:
    """A user message answering a function call."""
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(id=call_id, name=name, response=response)
            )
        ],
    )


def responses_in(request: LlmRequest) -> list[dict[str, Any]]:
    """Every function-response payload in a request's contents, in order."""
    return [
        dict(part.function_response.response or {})
        for content in request.contents
        for part in content.parts or []
        if part.function_response is not None
    ]


class Harness:
    """An InMemoryRunner with one session; ``turn`` runs one invocation to the end."""

    def __init__(
        self, agent: BaseAgent, plugins: list[BasePlugin] | None = None, **runner: Any
    ) -> None:
        self.runner = InMemoryRunner(agent, app_name="app", plugins=plugins, **runner)
        self.runner.session_service.create_session(
            app_name="app", user_id=USER, session_id=SESSION
        ).run()

    def turn(
        self,
        message: types.Content | str = "hi",
        run_config: RunConfig | None = None,
        state_delta: dict[str, Any] | None = None,
        session_id: str = SESSION,
    ) -> list[Event]:
        """The events of one invocation (raises what the run errors with)."""
        events = self.runner.run_async(
            user_id=USER,
            session_id=session_id,
            new_message=message,
            run_config=run_config,
            state_delta=state_delta,
        )
        return events.pipe(ops.to_list()).run()

    def new_session(self, session_id: str) -> None:
        """Creates another session of the same user."""
        self.runner.session_service.create_session(
            app_name="app", user_id=USER, session_id=session_id
        ).run()

    def session(self, session_id: str = SESSION) -> Session:
        """The persisted session, read back from the session service."""
        found = self.runner.session_service.get_session(
            app_name="app", user_id=USER, session_id=session_id
        ).run()
        assert found is not None
        return found
