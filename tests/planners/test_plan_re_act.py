"""PlanReActPlanner reads responses as google-adk 2.13's does (checked against it)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_rx.planners import PlanReActPlanner
from adk_rx.planners.plan_re_act import FINAL_ANSWER_TAG, PLANNING_TAG, REASONING_TAG


def text(value: str, **extra: Any) -> types.Part:
    return types.Part(text=value, **extra)


def call(name: str | None) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args={}))


CASES = {
    "plain answer": [text("Just an answer.")],
    "planning then call": [text(f"{PLANNING_TAG}1. look up"), call("lookup"), call("notify")],
    "reasoning and final answer": [text(f"{REASONING_TAG}seen it{FINAL_ANSWER_TAG}5 days")],
    "two final answer tags": [text(f"a{FINAL_ANSWER_TAG}b{FINAL_ANSWER_TAG}c")],
    "only the first group of calls": [call("a"), call("b"), text("between"), call("c")],
    "a nameless call is dropped": [call(None), text("after"), call("a")],
    "an answer tag with nothing after": [text(f"{PLANNING_TAG}plan{FINAL_ANSWER_TAG}")],
}


def dump(parts: list[types.Part] | None) -> Any:
    return None if parts is None else [p.model_dump(exclude_none=True) for p in parts]


@pytest.mark.parametrize("name", sorted(CASES))
def test_response_parts_match_google_adk(name: str) -> None:
    from google.adk.planners import PlanReActPlanner as AdkPlanReActPlanner

    ours = PlanReActPlanner().process_planning_response(None, [p.model_copy() for p in CASES[name]])  # type: ignore[arg-type]
    theirs = AdkPlanReActPlanner().process_planning_response(
        None,  # type: ignore[arg-type]
        [p.model_copy(deep=True) for p in CASES[name]],
    )

    assert dump(ours) == dump(theirs)


def test_the_instruction_is_google_adks() -> None:
    from google.adk.planners import PlanReActPlanner as AdkPlanReActPlanner

    ours = PlanReActPlanner().build_planning_instruction(None, None)  # type: ignore[arg-type]
    assert ours == AdkPlanReActPlanner().build_planning_instruction(None, None)  # type: ignore[arg-type]


def test_the_response_parts_are_not_edited_in_place() -> None:
    part = text(f"{PLANNING_TAG}plan")

    [kept] = PlanReActPlanner().process_planning_response(None, [part])  # type: ignore[arg-type,misc]

    assert (kept.text, kept.thought) == ("plan", True)
    assert (part.text, part.thought) == (f"{PLANNING_TAG}plan", None)
