"""The console renderer of ``adk-rx run``: grounding sources and the turn summary line."""

from __future__ import annotations

import io

from google.genai import types
from rich.console import Console

from adk_rx import Event
from adk_rx.cli.render import ConsoleRenderer
from adk_rx.cli.stats import TurnSummary
from adk_rx.usage import TokenUsage


def renderer() -> tuple[ConsoleRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, highlight=False, soft_wrap=True, color_system=None)
    return ConsoleRenderer(console=console, err=console), out


def test_a_grounded_answer_lists_its_sources_under_the_text() -> None:
    render, out = renderer()
    grounding = types.GroundingMetadata(
        grounding_chunks=[
            types.GroundingChunk(
                web=types.GroundingChunkWeb(uri="https://example.com/a", title="Orders help")
            ),
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://example.com/b")),
        ]
    )
    event = Event(
        author="desk",
        content=types.Content(role="model", parts=[types.Part(text="It shipped.")]),
        grounding_metadata=grounding,
    )

    render.event(event)

    assert out.getvalue().splitlines() == [
        "desk: It shipped.",
        "  [1] Orders help <https://example.com/a>",
        "  [2] https://example.com/b <https://example.com/b>",
    ]


def test_the_turn_line_shows_calls_token_usage_and_time() -> None:
    render, out = renderer()
    usage = TokenUsage(prompt_tokens=30, candidates_tokens=6, total_tokens=36, responses=2)

    render.turn_end(TurnSummary(model_calls=2, tool_calls=1, usage=usage, millis=12.4))
    render.turn_end(TurnSummary(model_calls=1, tool_calls=0, usage=TokenUsage(), millis=3))

    assert out.getvalue().splitlines() == [
        "  2 model calls · 1 tool call · 36 tokens (30 in, 6 out) · 12 ms",
        "  1 model call · 0 tool calls · 3 ms",
    ]
