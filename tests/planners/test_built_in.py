"""BuiltInPlanner sets the thinking config and leaves instructions and responses alone."""

from __future__ import annotations

from google.genai import types

from adk_rx.models.llm_request import LlmRequest
from adk_rx.planners import BuiltInPlanner


def test_the_thinking_config_replaces_the_requests() -> None:
    thinking = types.ThinkingConfig(thinking_budget=0)
    request = LlmRequest()
    request.config.thinking_config = types.ThinkingConfig(thinking_budget=99)
    planner = BuiltInPlanner(thinking_config=thinking)

    planner.apply_thinking_config(request)

    assert request.config.thinking_config is thinking
    assert planner.build_planning_instruction(None, request) is None  # type: ignore[arg-type]
    assert planner.process_planning_response(None, [types.Part(text="x")]) is None  # type: ignore[arg-type]
