"""A resumable workflow app for the SIGKILL test; run as a module it is the worker killed.

``python -m tests.workflow.crash_workflow DB_URL LOG`` starts one invocation on a new session
``s`` of user ``u`` and waits inside node ``b`` (an async node) until it is killed. Every
node run appends a line to LOG, so the test counts runs across both processes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from adk_rx import App, ResumabilityConfig
from adk_rx.workflow import START, JoinNode, Workflow


def _log(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line + "\n")
        out.flush()


def build(path: Path, *, block: bool) -> App:
    """The app: START -> a -> (b, c) -> join -> d; with ``block``, b never returns."""

    def a(node_input: Any) -> str:
        _log(path, "a")
        return "A"

    async def b(node_input: str) -> str:
        _log(path, "b")
        if block:
            _log(path, "blocked")
            await asyncio.Event().wait()
        return node_input + "B"

    def c(node_input: str) -> str:
        _log(path, "c")
        return node_input + "C"

    def d(node_input: dict[str, str]) -> str:
        _log(path, "d")
        return "|".join(f"{k}={v}" for k, v in sorted(node_input.items()))

    workflow = Workflow(name="wf", edges=[(START, a, (c, b), JoinNode(name="join"), d)])
    return App(
        name="crash", root_agent=workflow, resumability_config=ResumabilityConfig(is_resumable=True)
    )


def main() -> None:
    from adk_rx import Runner, SqlSessionService

    url, log = sys.argv[1], Path(sys.argv[2])
    service = SqlSessionService(url)
    runner = Runner(app=build(log, block=True), session_service=service)
    service.create_session(app_name="crash", user_id="u", session_id="s").run()
    for _ in runner.run(user_id="u", session_id="s", new_message="go"):
        pass


if __name__ == "__main__":
    main()
