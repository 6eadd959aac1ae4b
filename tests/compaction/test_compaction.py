"""Event compaction: by interval and by tokens, summaries in requests, failures skipped."""

from __future__ import annotations

import logging
from typing import Any

from google.genai import types
from reactivex import operators as ops

from adk_rx import App, EventsCompactionConfig, InMemoryRunner, LlmAgent
from adk_rx.compaction import BaseEventSummarizer, LlmEventSummarizer
from adk_rx.events import EventCompaction
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.tool_harness import call, calls


def _runner(agent: LlmAgent, config: EventsCompactionConfig) -> InMemoryRunner:
    runner = InMemoryRunner(app=App(name="app", root_agent=agent, events_compaction_config=config))
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    return runner


def _turn(runner: InMemoryRunner, text: str) -> list[Any]:
    events = runner.run_async(user_id="u", session_id="s", new_message=text)
    out = events.pipe(ops.to_list()).run()
    runner.when_idle(user_id="u", session_id="s").run()
    return out


def _stored(runner: InMemoryRunner) -> list[Any]:
    return (
        runner.session_service.get_session(app_name="app", user_id="u", session_id="s").run().events
    )


def _texts(contents: list[types.Content]) -> list[str]:
    return [p.text or "" for c in contents for p in c.parts or [] if p.text]


def test_every_interval_of_invocations_is_summarised_with_the_agents_model():
    llm = ScriptedLlm(["r1", "r2", "summary of 1 and 2", "r3"])
    runner = _runner(
        LlmAgent(name="helper", model=llm),
        EventsCompactionConfig(compaction_interval=2, overlap_size=0),
    )

    first = _turn(runner, "u1")
    second = _turn(runner, "u2")
    _turn(runner, "u3")

    assert simplify_events(first + second) == ["helper: r1", "helper: r2"]  # never emitted
    stored = _stored(runner)
    compactions = [e for e in stored if e.actions.compaction is not None]
    assert len(compactions) == 1
    compaction = compactions[0].actions.compaction
    assert isinstance(compaction, EventCompaction)
    assert compaction.start_timestamp == stored[0].timestamp
    assert compaction.end_timestamp == stored[3].timestamp
    summary_prompt = _texts(llm.requests[2].contents)[0]
    assert "helper: r1" in summary_prompt and "u2" in summary_prompt
    assert _texts(llm.requests[3].contents) == ["summary of 1 and 2", "u3"]


def test_an_overlapping_window_supersedes_the_earlier_summary():
    llm = ScriptedLlm(["r1", "s1", "r2", "s12", "r3", "s23"])
    runner = _runner(
        LlmAgent(name="helper", model=llm),
        EventsCompactionConfig(compaction_interval=1, overlap_size=1),
    )

    _turn(runner, "u1")
    _turn(runner, "u2")
    _turn(runner, "u3")

    # the third turn's request: s12 (which covers s1's range) replaces turns 1 and 2
    assert _texts(llm.requests[4].contents) == ["s12", "u3"]


def _usage(tokens: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(prompt_token_count=tokens)


def _reply(text: str, tokens: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        usage_metadata=_usage(tokens),
    )


def test_a_prompt_over_the_token_threshold_summarises_all_but_the_newest_events():
    llm = ScriptedLlm([_reply("r1", 50), _reply("r2", 500), "rolled up", "r3"])
    runner = _runner(
        LlmAgent(name="helper", model=llm),
        EventsCompactionConfig(token_threshold=100, event_retention_size=1),
    )

    _turn(runner, "u1")
    assert not [e for e in _stored(runner) if e.actions.compaction]  # 50 tokens: no trigger
    _turn(runner, "u2")
    _turn(runner, "u3")

    assert _texts(llm.requests[2].contents)[0].count("helper: r") == 1  # r1 only; r2 kept
    assert _texts(llm.requests[3].contents) == ["rolled up", "r2", "u3"]


def test_function_calls_and_responses_stay_paired_around_a_summary():
    def lookup(order: str) -> dict[str, Any]:
        """Looks an order up."""
        return {"order": order}

    llm = ScriptedLlm([calls(call("lookup", {"order": "o1"}, "c-1")), "found", "summary", "r2"])
    runner = _runner(
        LlmAgent(name="helper", model=llm, tools=[lookup]),
        EventsCompactionConfig(compaction_interval=1, overlap_size=0),
    )

    _turn(runner, "u1")
    _turn(runner, "u2")

    contents = llm.requests[3].contents
    assert _texts(contents) == ["summary", "u2"]
    assert not [p for c in contents for p in c.parts or [] if p.function_response]
    assert "[FUNCTION_CALL: lookup" in _texts(llm.requests[2].contents)[0]


class Failing(BaseEventSummarizer):
    def __init__(self) -> None:
        self.asked = 0

    def summarize_events(self, events):
        self.asked += 1
        raise RuntimeError("summarizer down")


def test_a_failing_summarizer_is_logged_and_leaves_the_session_as_it_was(caplog):
    summarizer = Failing()
    llm = ScriptedLlm(["r1", "r2"])
    runner = _runner(
        LlmAgent(name="helper", model=llm),
        EventsCompactionConfig(compaction_interval=1, overlap_size=0, summarizer=summarizer),
    )

    with caplog.at_level(logging.WARNING, logger="adk_rx.compaction"):
        first = _turn(runner, "u1")
        second = _turn(runner, "u2")

    assert simplify_events(first + second) == ["helper: r1", "helper: r2"]
    assert summarizer.asked == 2
    assert not [e for e in _stored(runner) if e.actions.compaction]
    assert "summarizer down" in caplog.text
    assert _texts(llm.requests[1].contents) == ["u1", "r1", "u2"]


def test_compaction_runs_after_the_invocation_emitted_its_events():
    seen: list[Any] = []
    emitted_when_summarising: list[int] = []

    def summarise(_: Any) -> str:
        emitted_when_summarising.append(len(seen))
        return "summary"

    summarizer = LlmEventSummarizer(ScriptedLlm([summarise]))
    runner = _runner(
        LlmAgent(name="helper", model=ScriptedLlm(["r1"])),
        EventsCompactionConfig(compaction_interval=1, overlap_size=0, summarizer=summarizer),
    )
    done: list[bool] = []

    runner.run_async(user_id="u", session_id="s", new_message="u1").subscribe(
        seen.append, on_completed=lambda: done.append(True)
    )
    runner.when_idle(user_id="u", session_id="s").run()

    assert done == [True]
    assert emitted_when_summarising == [1]
