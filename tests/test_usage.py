"""Token usage summed per invocation and per agent: the helper over events and the plugin."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, LlmResponse, RunConfig, SequentialAgent, StreamingMode
from adk_rx.testing import ScriptedLlm
from adk_rx.usage import ModelPrice, Pricing, TokenUsage, UsagePlugin, summarize_usage


def usage(
    prompt: int, out: int, thoughts: int = 0, cached: int = 0
) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=out,
        thoughts_token_count=thoughts or None,
        cached_content_token_count=cached or None,
        total_token_count=prompt + out + thoughts,
    )


def text(reply: str, tokens: types.GenerateContentResponseUsageMetadata) -> LlmResponse:
    return LlmResponse.text(reply, usage_metadata=tokens)


def call(
    name: str, args: dict[str, object], tokens: types.GenerateContentResponseUsageMetadata
) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=tokens)


AUTO = RunConfig(auto_create_session=True)


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def test_a_tool_turn_sums_both_model_calls_of_the_invocation() -> None:
    llm = ScriptedLlm(
        [call("add", {"a": 1, "b": 2}, usage(10, 5, thoughts=3, cached=4)), text("3", usage(20, 1))]
    )
    plugin = UsagePlugin()
    runner = InMemoryRunner(agent=LlmAgent(name="calc", model=llm, tools=[add]), plugins=[plugin])

    events = list(runner.run(user_id="u", session_id="s", new_message="1+2?", run_config=AUTO))
    report = summarize_usage(events)

    expected = TokenUsage(
        prompt_tokens=30, candidates_tokens=6, thoughts_tokens=3, cached_tokens=4,
        total_tokens=39, responses=2,
    )  # fmt: skip
    assert report.total == expected
    [invocation_id] = report.by_invocation
    assert report.by_invocation[invocation_id] == expected
    assert report.by_agent == {"calc": expected}
    assert plugin.usage(invocation_id).total == expected
    assert str(expected) == "39 tokens (30 in, 6 out, 3 thinking, 4 cached)"


def test_a_transfer_splits_usage_by_agent_within_one_invocation() -> None:
    root_llm = ScriptedLlm([call("transfer_to_agent", {"agent_name": "billing"}, usage(7, 2))])
    billing_llm = ScriptedLlm([text("Refunded.", usage(11, 3))])
    billing = LlmAgent(name="billing", model=billing_llm, description="Refunds.")
    root = LlmAgent(name="root", model=root_llm, sub_agents=[billing])
    runner = InMemoryRunner(agent=root)

    events = list(
        runner.run(user_id="u", session_id="s", new_message="refund please", run_config=AUTO)
    )
    report = summarize_usage(events)

    assert report.by_agent["root"].total_tokens == 9
    assert report.by_agent["billing"].total_tokens == 14
    assert report.total.total_tokens == 23 and report.total.responses == 2
    assert len(report.by_invocation) == 1


def test_a_workflow_agent_and_two_invocations_are_kept_apart_in_the_stored_session() -> None:
    first = LlmAgent(
        name="draft", model=ScriptedLlm([text("a", usage(5, 1)), text("c", usage(5, 1))])
    )
    second = LlmAgent(
        name="review", model=ScriptedLlm([text("b", usage(8, 2)), text("d", usage(8, 2))])
    )
    runner = InMemoryRunner(agent=SequentialAgent(name="pipeline", sub_agents=[first, second]))

    for message in ("one", "two"):
        list(runner.run(user_id="u", session_id="s", new_message=message, run_config=AUTO))
    session = runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    assert session is not None
    report = summarize_usage(session.events)

    assert len(report.by_invocation) == 2
    assert {u.total_tokens for u in report.by_invocation.values()} == {16}
    assert report.by_agent["draft"].total_tokens == 12
    assert report.by_agent["review"].total_tokens == 20
    assert report.total.responses == 4
    assert {agent for (_, agent) in report.by_invocation_agent} == {"draft", "review"}


def test_partial_events_and_events_without_usage_count_nothing() -> None:
    llm = ScriptedLlm([[LlmResponse.text("He", partial=True), text("Hello", usage(3, 2))]])
    runner = InMemoryRunner(agent=LlmAgent(name="greeter", model=llm))
    events = list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="hi",
            run_config=RunConfig(streaming_mode=StreamingMode.SSE, auto_create_session=True),
        )
    )

    assert [e.partial for e in events] == [True, None]
    assert summarize_usage(events).total.total_tokens == 5
    assert summarize_usage([]).total == TokenUsage()
    assert str(TokenUsage()) == "no token counts"


# -- cost ---------------------------------------------------------------------------------------


def priced(reply: str, tokens: types.GenerateContentResponseUsageMetadata, model: str) -> Any:
    return LlmResponse.text(reply, usage_metadata=tokens, model_version=model)


PRICING = Pricing(
    {
        r"big-.*": ModelPrice(input_per_million=10.0, output_per_million=30.0),
        r"small-.*": ModelPrice(
            input_per_million=1.0, output_per_million=2.0, cached_input_per_million=0.5
        ),
    }
)


def test_summarize_usage_prices_each_response_by_its_model_per_invocation_and_agent() -> None:
    first = LlmAgent(
        name="draft",
        model=ScriptedLlm(
            [priced("a", usage(1_000, 100), "big-2"), priced("c", usage(1_000, 100), "big-2")]
        ),
    )
    second = LlmAgent(
        name="review",
        model=ScriptedLlm(
            [
                priced("b", usage(2_000, 500, cached=1_000), "small-1"),
                priced("d", usage(10, 10), "unknown-model"),
            ]
        ),
    )
    runner = InMemoryRunner(agent=SequentialAgent(name="pipeline", sub_agents=[first, second]))
    events = [
        e
        for message in ("one", "two")
        for e in runner.run(user_id="u", session_id="s", new_message=message, run_config=AUTO)
    ]

    cost = summarize_usage(events, pricing=PRICING).cost

    assert cost is not None
    big = 1_000 * 10e-6 + 100 * 30e-6  # 0.013
    small = 1_000 * 1e-6 + 1_000 * 0.5e-6 + 500 * 2e-6  # 0.0025
    assert cost.by_agent == pytest.approx({"draft": 2 * big, "review": small})
    assert cost.total == pytest.approx(2 * big + small)
    assert sorted(cost.by_invocation.values()) == pytest.approx(sorted([big, big + small]))
    assert cost.unpriced == frozenset({"unknown-model"})
    assert summarize_usage(events).cost is None


def test_the_cli_turn_line_shows_the_cost_when_the_app_has_pricing() -> None:
    from adk_rx.cli.stats import TurnStats

    stats = TurnStats(PRICING)
    stats.start()
    for event in InMemoryRunner(
        agent=LlmAgent(name="a", model=ScriptedLlm([priced("hi", usage(1_000, 100), "big-1")]))
    ).run(user_id="u", session_id="s", new_message="hi", run_config=AUTO):
        stats.on_event_callback(event=event)

    assert "cost 0.0130" in str(stats.summary())
    assert "cost" not in str(TurnStats().summary())
