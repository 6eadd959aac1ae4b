"""The deterministic metrics score exactly as google-adk 2.13 scores the same turns.

An agent on a scripted model runs an eval set through adk_rx's ``evaluate``; the turns it
produced, with the expected ones, then go through google-adk's own evaluators for the same
config entry. Scores must be equal, per turn and per case.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores
from google.genai import types

from adk_rx import LlmAgent, LlmRequest, LlmResponse
from adk_rx.evaluation import EvalConfig, EvalSet, evaluate
from adk_rx.evaluation.scoring import rouge1_f1
from adk_rx.testing import ScriptedLlm

from .oracle import adk_rx_scores, google_adk_scores
from .support import evalset_json, model, user

_TEXT = """the order orders ordered shipped shipping ships DHL parcel parcels arriving arrived
used uses says keys dying generously 1234 5678 3.0 café naïve 東京 タワー สวัสดี Über crème"""
WORDS = _TEXT.split()


def test_rouge_1_f1_equals_google_adks_on_many_text_pairs() -> None:
    rng = random.Random(35)
    for _ in range(400):
        candidate = " ".join(rng.choices(WORDS, k=rng.randint(0, 12)))
        reference = " ".join(rng.choices(WORDS, k=rng.randint(1, 12)))
        theirs = _calculate_rouge_1_scores(candidate, reference).fmeasure
        assert rouge1_f1(candidate, reference) == theirs, (candidate, reference)


def lookup_order(order_id: str) -> dict[str, Any]:
    """Looks an order up."""
    return {"order_id": order_id, "status": "shipped"}


def notify(channel: str, count: int) -> dict[str, Any]:
    """Notifies the team."""
    return {"sent": True}


def _answer(request: LlmRequest) -> LlmResponse:
    last = (request.contents[-1].parts or [types.Part()])[0]
    if last.function_response is not None:
        return LlmResponse.text("Orders 1234 and 5678 have shipped with DHL.")
    digits = [w for w in (last.text or "").split() if w.isdigit()]
    parts = [
        types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order_id": d}))
        for d in digits
    ]
    if not parts:
        return LlmResponse.text("Hello! Ask me about an order.")
    parts.append(
        types.Part(
            function_call=types.FunctionCall(
                name="notify", args={"channel": "ops", "count": len(digits)}
            )
        )
    )
    return LlmResponse(content=types.Content(role="model", parts=parts))


def agent() -> LlmAgent:
    return LlmAgent(name="desk", model=ScriptedLlm([_answer] * 200), tools=[lookup_order, notify])


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def turn(question: str, answer: str, *uses: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_content": user(question),
        "final_response": model(answer),
        "intermediate_data": {"tool_uses": list(uses), "tool_responses": []},
    }


SHIPPED = "Orders 1234 and 5678 have shipped with DHL."
L1234, L5678 = call("lookup_order", order_id="1234"), call("lookup_order", order_id="5678")
NOTIFY = call("notify", channel="ops", count=2)
CASES = [
    # every call, in order
    ("exact", [turn("where are 1234 5678", SHIPPED, L1234, L5678, NOTIFY)]),
    # a subset, in order; then a turn without tools
    ("subset", [turn("where are 1234 5678", "Both orders shipped.", L1234, NOTIFY),
                turn("hello", "Hello! Ask me about orders.")]),
    # the right calls in another order
    ("reordered", [turn("where are 1234 5678", SHIPPED, NOTIFY, L5678, L1234)]),
    # a number given as 2.0 and a wrong argument
    ("args", [turn("where are 1234 5678", "shipped", call("lookup_order", order_id="9999"),
                   call("notify", channel="ops", count=2.0))]),
    # a call that never happens; an answer in other words
    ("missing", [turn("where is 1234", "It went out via DHL, order 1234.",
                      call("lookup_order", order_id="1234"), call("refund", order_id="1234"))]),
]  # fmt: skip


def eval_set() -> EvalSet:
    cases = [{"eval_id": name, "conversation": turns} for name, turns in CASES]
    return EvalSet.model_validate(evalset_json(*cases))


CRITERIA = [
    ("tool_trajectory_avg_score", 1.0),
    ("tool_trajectory_avg_score", {"threshold": 0.5, "match_type": "IN_ORDER"}),
    ("tool_trajectory_avg_score", {"threshold": 0.5, "match_type": "ANY_ORDER"}),
    ("tool_trajectory_avg_score", {"threshold": 0.5, "match_type": "EXACT", "ignore_args": True}),
    ("tool_trajectory_avg_score", {"threshold": 0.5, "matchType": "in_order", "ignoreArgs": True}),
    ("response_match_score", 0.8),
    ("response_match_score", {"threshold": 0.3}),
]


@pytest.mark.parametrize(("metric", "criterion"), CRITERIA)
def test_scores_equal_google_adks_for_the_same_turns_and_config(
    metric: str, criterion: Any
) -> None:
    config = EvalConfig.from_mapping({"criteria": {metric: criterion}})

    result = evaluate(agent(), eval_set(), config)

    for case in result.cases:
        assert case.error is None, case.error
        ours = adk_rx_scores(case, metric)
        assert ours == google_adk_scores(case, metric, criterion), case.eval_id
    verdicts = {case.eval_id: case.passed for case in result.cases}
    assert True in verdicts.values() or metric == "response_match_score"
