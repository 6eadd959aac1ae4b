"""Runner.rewind against google-adk 2.13's Runner.rewind_async on the same session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.genai import types

from adk_rx import (
    Event,
    InMemoryArtifactService,
    InMemorySessionService,
    InvocationNotFoundError,
    LlmAgent,
    Runner,
)
from adk_rx.events import EventActions
from adk_rx.testing import ScriptedLlm

# (invocation, author, text, state_delta, artifacts saved as name -> text)
HISTORY: list[tuple[str, str, str, dict[str, Any], dict[str, str]]] = [
    ("e-1", "user", "first", {}, {}),
    ("e-1", "desk", "one", {"a": 1, "keep": "x", "user:seen": 1}, {"notes.txt": "v0"}),
    ("e-2", "user", "second", {}, {}),
    ("e-2", "desk", "two", {"a": 2, "b": 1, "user:seen": 2}, {"notes.txt": "v1", "new.txt": "n"}),
    ("e-3", "user", "third", {}, {}),
    ("e-3", "desk", "three", {"keep": None, "c": 3}, {"user:prefs.txt": "u"}),
]


def _adk_rx_case() -> tuple[Runner, ScriptedLlm, str]:
    sessions, artifacts = InMemorySessionService(), InMemoryArtifactService()
    llm = ScriptedLlm(["after the rewind"])
    runner = Runner(
        agent=LlmAgent(name="desk", model=llm),
        app_name="rw",
        session_service=sessions,
        artifact_service=artifacts,
    )
    session = sessions.create_session(app_name="rw", user_id="u", state={"start": 0}).run()
    for invocation, author, text, delta, files in HISTORY:
        versions = {
            name: artifacts.save_artifact(
                app_name="rw", user_id="u", session_id=session.id, filename=name,
                artifact=types.Part(text=body),
            ).run()
            for name, body in files.items()
        }  # fmt: skip
        role = "user" if author == "user" else "model"
        event = Event(
            invocation_id=invocation,
            author=author,
            content=types.Content(role=role, parts=[types.Part(text=text)]),
            actions=EventActions(state_delta=delta, artifact_delta=versions),
        )
        sessions.append_event(session, event).run()
    return runner, llm, session.id


async def _google_adk_case(before: str) -> dict[str, Any]:
    from google.adk.agents import LlmAgent as AdkAgent
    from google.adk.artifacts import InMemoryArtifactService as AdkArtifacts
    from google.adk.events import Event as AdkEvent
    from google.adk.events import EventActions as AdkActions
    from google.adk.runners import Runner as AdkRunner
    from google.adk.sessions import InMemorySessionService as AdkSessions

    sessions, artifacts = AdkSessions(), AdkArtifacts()
    runner = AdkRunner(
        app_name="rw",
        agent=AdkAgent(name="desk", model="gemini-2.5-flash"),
        session_service=sessions,
        artifact_service=artifacts,
    )
    session = await sessions.create_session(app_name="rw", user_id="u", state={"start": 0})
    for invocation, author, text, delta, files in HISTORY:
        versions = {}
        for name, body in files.items():
            versions[name] = await artifacts.save_artifact(
                app_name="rw", user_id="u", session_id=session.id, filename=name,
                artifact=types.Part(text=body),
            )  # fmt: skip
        role = "user" if author == "user" else "model"
        await sessions.append_event(
            session,
            AdkEvent(
                invocation_id=invocation,
                author=author,
                content=types.Content(role=role, parts=[types.Part(text=text)]),
                actions=AdkActions(state_delta=dict(delta), artifact_delta=versions),
            ),
        )
    await runner.rewind_async(
        user_id="u", session_id=session.id, rewind_before_invocation_id=before
    )
    stored = await sessions.get_session(app_name="rw", user_id="u", session_id=session.id)
    assert stored is not None
    loaded = {}
    for name in ("notes.txt", "new.txt", "user:prefs.txt"):
        part = await artifacts.load_artifact(
            app_name="rw", user_id="u", session_id=session.id, filename=name
        )
        loaded[name] = part.text if part is not None else None
    rewind = stored.events[-1]
    return {
        "author": rewind.author,
        "rewind_before": rewind.actions.rewind_before_invocation_id,
        "state_delta": rewind.actions.state_delta,
        "artifact_delta": rewind.actions.artifact_delta,
        "state": dict(stored.state),
        "artifacts": loaded,
    }


def _adk_rx_result(before: str) -> tuple[dict[str, Any], Runner, ScriptedLlm, str]:
    runner, llm, session_id = _adk_rx_case()
    rewind = runner.rewind(user_id="u", session_id=session_id, rewind_before_invocation_id=before)
    event = rewind.run()
    stored = runner.session_service.get_session(
        app_name="rw", user_id="u", session_id=session_id
    ).run()
    artifacts = runner.artifact_service
    assert stored is not None and artifacts is not None
    loaded = {}
    for name in ("notes.txt", "new.txt", "user:prefs.txt"):
        part = artifacts.load_artifact(
            app_name="rw", user_id="u", session_id=session_id, filename=name
        ).run()
        loaded[name] = part.text if part is not None else None
    result = {
        "author": event.author,
        "rewind_before": event.actions.rewind_before_invocation_id,
        "state_delta": dict(event.actions.state_delta),
        "artifact_delta": dict(event.actions.artifact_delta),
        "state": dict(stored.state),
        "artifacts": loaded,
    }
    return result, runner, llm, session_id


@pytest.mark.parametrize("before", ["e-1", "e-2", "e-3"])
def test_rewind_matches_google_adk_on_the_same_session(before: str):
    ours, *_ = _adk_rx_result(before)
    theirs = asyncio.run(_google_adk_case(before))

    assert ours == theirs


def test_the_next_turn_does_not_see_the_rewound_invocations():
    _, runner, llm, session_id = _adk_rx_result("e-2")

    events = list(runner.run(user_id="u", session_id=session_id, new_message="fourth"))

    assert events[-1].text() == "after the rewind"
    said = [c.parts[0].text for c in llm.requests[0].contents if c.parts]
    assert said == ["first", "one", "fourth"]


def test_rewinding_an_unknown_invocation_is_an_error_and_stores_nothing():
    runner, _, session_id = _adk_rx_case()

    with pytest.raises(InvocationNotFoundError):
        runner.rewind(user_id="u", session_id=session_id, rewind_before_invocation_id="e-9").run()

    stored = runner.session_service.get_session(
        app_name="rw", user_id="u", session_id=session_id
    ).run()
    assert stored is not None and len(stored.events) == len(HISTORY)


def test_compaction_does_not_summarise_rewound_invocations():
    from reactivex import Observable

    from adk_rx import EventsCompactionConfig
    from adk_rx.compaction.compact import compact_session
    from adk_rx.compaction.summarizer import BaseEventSummarizer
    from adk_rx.rx._engine import sync

    seen: list[list[str]] = []

    class Recording(BaseEventSummarizer):
        def summarize_events(self, events) -> Observable[Event]:
            seen.append([e.invocation_id for e in events])
            return sync.empty()

    runner, _, session_id = _adk_rx_case()
    runner.rewind(user_id="u", session_id=session_id, rewind_before_invocation_id="e-2").run()
    session = runner.session_service.get_session(
        app_name="rw", user_id="u", session_id=session_id
    ).run()
    assert session is not None
    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0)

    import reactivex.operators as ops

    compact_session(session, runner.session_service, config, Recording()).pipe(ops.to_list()).run()

    assert seen and all("e-2" not in ids and "e-3" not in ids for ids in seen)
