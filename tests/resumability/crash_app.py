"""A resumable app for the crash tests; run as a module it is the worker that gets killed.

``python -m tests.resumability.crash_app DB_URL LOG`` starts one invocation of the app on a new
session ``s`` of user ``u`` and blocks inside the ``charge`` tool until it is killed. Every
model call and tool execution appends a line to LOG, so the test can count them across
both processes.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from google.genai import types

from adk_rx import App, FunctionTool, LlmAgent, ResumabilityConfig, SequentialAgent
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm


def _log(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line + "\n")
        out.flush()


def _calls(*parts: tuple[str, str, dict[str, Any]]) -> LlmResponse:
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(id=cid, name=name, args=args))
                for cid, name, args in parts
            ],
        )
    )


def _model(path: Path, agent: str, replies: list[Any]) -> ScriptedLlm:
    def logged(reply: Any) -> Any:
        def answer(_: Any) -> Any:
            _log(path, f"model:{agent}")
            return reply

        return answer

    return ScriptedLlm([logged(r) for r in replies])


def build(path: Path, *, block: bool) -> App:
    """The app; with ``block`` the ``charge`` tool never returns."""

    def lookup(order: str) -> dict[str, Any]:
        """Looks an order up."""
        _log(path, "tool:lookup")
        return {"order": order, "total": 42}

    def charge(amount: int) -> dict[str, Any]:
        """Charges the customer."""
        _log(path, "tool:charge")
        if block:
            _log(path, "blocked")
            threading.Event().wait()
        return {"charged": amount}

    b_replies = [
        _calls(("c-1", "lookup", {"order": "o-1"}), ("c-2", "charge", {"amount": 42})),
        "b done",
    ]
    root = SequentialAgent(
        name="checkout",
        sub_agents=[
            LlmAgent(name="a", model=_model(path, "a", ["a done"])),
            LlmAgent(
                name="b",
                model=_model(path, "b", b_replies[-1:] if not block else b_replies),
                tools=[FunctionTool(lookup, idempotent=True), FunctionTool(charge)],
            ),
            LlmAgent(name="c", model=_model(path, "c", ["c done"])),
        ],
    )
    return App(
        name="crash", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )


def main() -> None:
    from adk_rx import Runner, SqlSessionService

    url, log = sys.argv[1], Path(sys.argv[2])
    service = SqlSessionService(url)
    runner = Runner(app=build(log, block=True), session_service=service)
    service.create_session(app_name="crash", user_id="u", session_id="s").run()
    for _ in runner.run(user_id="u", session_id="s", new_message="check out"):
        pass


if __name__ == "__main__":
    main()
