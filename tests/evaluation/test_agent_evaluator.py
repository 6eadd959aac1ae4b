"""AgentEvaluator in pytest tests: the example's eval set passes; a changed one fails with a
readable diff; google-adk's ``await AgentEvaluator.evaluate(...)`` works too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_rx.evaluation import AgentEvaluator

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"


def test_the_support_desk_eval_set_passes() -> None:
    assert AgentEvaluator.evaluate(str(EXAMPLE), EXAMPLE / "evals") is None


def test_a_changed_expectation_fails_the_test_with_what_differed(tmp_path: Path) -> None:
    data = json.loads((EXAMPLE / "evals" / "support_desk.evalset.json").read_text())
    turn = data["eval_cases"][0]["conversation"][0]
    turn["intermediate_data"]["tool_uses"][1]["args"] = {"order_id": "9999"}
    turn["final_response"]["parts"][0]["text"] = "Your kettle was eaten by a bear."
    (tmp_path / "changed.evalset.json").write_text(json.dumps(data))

    with pytest.raises(AssertionError) as caught:
        AgentEvaluator.evaluate(str(EXAMPLE), tmp_path)

    message = str(caught.value)
    assert "case 'where_is_my_order': tool_trajectory_avg_score 0.00 (needs 1.00)" in message
    assert 'lookup_order({"order_id": "9999"})' in message  # expected
    assert 'lookup_order({"order_id": "1234"})' in message  # actual
    assert "- expected: 'Your kettle was eaten by a bear.'" in message
    assert "refund_asks_for_confirmation" not in message  # the passing case stays quiet


def test_google_adk_legacy_test_json_runs_too(tmp_path: Path) -> None:
    legacy = [
        {
            "query": "Where is my order 1234?",
            "expected_tool_use": [
                {"tool_name": "transfer_to_agent", "tool_input": {"agent_name": "shipping"}},
                {"tool_name": "lookup_order", "tool_input": {"order_id": "1234"}},
            ],
            "reference": "Order 1234 shipped with DHL and should arrive on 3 December 2026.",
        }
    ]
    (tmp_path / "orders.test.json").write_text(json.dumps(legacy))

    AgentEvaluator.evaluate(str(EXAMPLE), tmp_path / "orders.test.json")


@pytest.mark.asyncio
async def test_it_can_be_awaited_inside_an_async_test() -> None:
    awaitable = AgentEvaluator.evaluate(str(EXAMPLE), EXAMPLE / "evals")

    assert awaitable is not None
    await awaitable
