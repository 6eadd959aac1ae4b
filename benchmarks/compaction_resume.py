"""Compaction and resumption costs.

1. Building the model request of a 2,000-event session, without and with a compaction event
   that summarises all but the newest 20 events: median time (from a freshly read session,
   so nothing is memoised) and the request's size (JSON bytes of its contents).
2. Resuming a 200-event invocation stored in SQLite (reading the session, rebuilding where
   each agent stopped, skipping the finished agent), next to a plain one-reply turn on the
   same session for scale.

Run from the repository root: ``PYTHONPATH=. python benchmarks/compaction_resume.py``.
Medians of ``RUNS`` runs.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.genai import types

from adk_rx import (
    App,
    Event,
    EventActions,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    Runner,
    SqlSessionService,
)
from adk_rx.events import EventCompaction
from adk_rx.flows.contents import build_contents
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm

RUNS = 5
EVENTS = 2_000
KEEP = 20
TOOL_CALLS = 99  # user + 99 calls + 99 responses + final reply = 200 events


def median_ms(fn: Callable[[], Any], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _text(role: str, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def request_building() -> None:
    svc = InMemorySessionService()
    session = svc.create_session(app_name="bench", user_id="u", session_id="s").run()
    events = []
    for i in range(EVENTS // 2):
        inv = f"e-{i}"
        question = f"question {i}: " + "tell me about the order history " * 4
        answer = f"answer {i}: " + "the order shipped on time and arrived intact " * 4
        events.append(Event(author="user", invocation_id=inv, content=_text("user", question)))
        events.append(Event(author="helper", invocation_id=inv, content=_text("model", answer)))
    for event in events:
        svc.append_event(session, event).run()

    def build() -> list[types.Content]:
        fresh = svc.get_session(app_name="bench", user_id="u", session_id="s").run()
        fresh._memo.clear()  # as a session read from a SQL store: nothing converted yet
        return build_contents(fresh, "helper", None)

    def size(contents: list[types.Content]) -> int:
        return len(json.dumps([c.model_dump(mode="json", exclude_none=True) for c in contents]))

    plain_ms, plain = median_ms(build), build()
    covered = events[: EVENTS - KEEP]
    summary = Event(
        author="user",
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=covered[0].timestamp,
                end_timestamp=covered[-1].timestamp,
                compacted_content=_text("model", "summary: " + "orders shipped on time " * 20),
            )
        ),
    )
    svc.append_event(session, summary).run()
    compacted_ms, compacted = median_ms(build), build()
    print(f"request building, {EVENTS}-event session (median of {RUNS}):")
    print(f"  without compaction: {plain_ms:8.2f} ms  {len(plain):5d} contents  {size(plain):8d} B")
    print(
        f"  with compaction:    {compacted_ms:8.2f} ms  {len(compacted):5d} contents  "
        f"{size(compacted):8d} B"
    )
    print(
        f"  with/without: {compacted_ms / plain_ms:.2f}x the time, "
        f"{size(plain) / size(compacted):.0f}x smaller"
    )


def resume_cost() -> None:
    def lookup(n: int) -> dict[str, int]:
        """Looks a number up."""
        return {"n": n}

    def call(n: int) -> LlmResponse:
        part = types.Part(
            function_call=types.FunctionCall(id=f"c{n}", name="lookup", args={"n": n})
        )
        return LlmResponse(content=types.Content(role="model", parts=[part]))

    script: list[Any] = [call(n) for n in range(TOOL_CALLS)] + ["done"]
    script += ["again"] * (RUNS + 1)
    with tempfile.TemporaryDirectory() as folder:
        svc = SqlSessionService(f"sqlite:///{Path(folder) / 'bench.db'}")
        agent = LlmAgent(name="helper", model=ScriptedLlm(script), tools=[lookup])
        app = App(
            name="bench",
            root_agent=agent,
            resumability_config=ResumabilityConfig(is_resumable=True),
        )
        runner = Runner(app=app, session_service=svc)
        svc.create_session(app_name="bench", user_id="u", session_id="s").run()
        first = list(runner.run(user_id="u", session_id="s", new_message="count"))
        invocation = first[0].invocation_id
        stored = svc.get_session(app_name="bench", user_id="u", session_id="s").run()
        count = sum(1 for e in stored.events if e.invocation_id == invocation)

        def resume() -> None:
            list(runner.run(user_id="u", session_id="s", invocation_id=invocation))

        resume_ms = median_ms(resume)
        turn_ms = median_ms(
            lambda: list(runner.run(user_id="u", session_id="s", new_message="again"))
        )
        svc.close()
    print(f"resume of a {count}-event invocation on SQLite (median of {RUNS}):")
    print(f"  resume (finished agents skipped): {resume_ms:8.2f} ms")
    print(f"  a one-reply turn, same session:   {turn_ms:8.2f} ms")


if __name__ == "__main__":
    request_building()
    resume_cost()
