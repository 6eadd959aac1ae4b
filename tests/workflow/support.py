"""Running a workflow under an in-memory Runner, on a virtual clock when asked."""

from __future__ import annotations

from typing import Any

from google.genai import types
from reactivex import Observable
from reactivex.abc import SchedulerBase

from adk_rx import InMemoryRunner
from adk_rx.events import Event

USER = "u"


def runner_for(agent: Any, clock: SchedulerBase | None = None, **kwargs: Any) -> InMemoryRunner:
    """An in-memory Runner of ``agent`` whose timers run on ``clock``."""
    return InMemoryRunner(agent=agent, app_name="app", timer_scheduler=clock, **kwargs)


def start(runner: InMemoryRunner, text: str = "go", session_id: str = "s") -> Observable[Event]:
    """The (cold) run of one user message in session ``session_id`` (created if missing)."""
    service = runner.session_service
    if service.get_session(app_name="app", user_id=USER, session_id=session_id).run() is None:
        service.create_session(app_name="app", user_id=USER, session_id=session_id).run()
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return runner.run_async(user_id=USER, session_id=session_id, new_message=message)


def outputs(events: list[Event]) -> list[tuple[str | None, Any]]:
    """(node path, output) of the events that carry an output."""
    return [
        (e.node_info.path if e.node_info else None, e.output)
        for e in events
        if e.output is not None
    ]
