"""google-adk's eval set format: loaded, saved unchanged, and made from a session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_rx import InMemoryRunner, RunConfig
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation import EvalCase, EvalSet, evaluate

from .support import case, desk_agent, evalset_json, turn


def test_a_google_adk_eval_set_round_trips_with_its_unknown_fields(tmp_path: Path) -> None:
    data = evalset_json(
        case(
            "order",
            turn(
                "Where is order 1234?",
                "Order 1234 is shipped with DHL.",
                {"id": "adk-1", "name": "lookup_order", "args": {"order_id": "1234"}},
            ),
        )
    )
    desk = {"name": "desk", "instructions": "", "tool_declarations": []}
    data["eval_cases"][0]["conversation"][0]["app_details"] = {"agent_details": {"desk": desk}}
    data["future_field"] = {"kept": True}
    source = tmp_path / "desk.evalset.json"
    source.write_text(json.dumps(data))

    eval_set = EvalSet.load(source)
    written = json.loads(eval_set.save(tmp_path / "copy.evalset.json").read_text())

    [first] = eval_set.eval_cases
    assert first.conversation[0].expected_tool_uses()[0].args == {"order_id": "1234"}
    assert written["future_field"] == {"kept": True}
    assert written["eval_cases"][0]["rubrics"] is None
    assert written["eval_cases"][0]["final_session_state"] == {}
    assert written["eval_cases"][0]["conversation"][0]["app_details"] == {
        "agent_details": {"desk": desk}
    }
    assert EvalSet.load(tmp_path / "copy.evalset.json") == eval_set


def test_camel_case_keys_are_accepted(tmp_path: Path) -> None:
    source = tmp_path / "camel.evalset.json"
    source.write_text(
        json.dumps(
            {
                "evalSetId": "camel",
                "evalCases": [
                    {
                        "evalId": "c1",
                        "conversation": [
                            {"userContent": {"role": "user", "parts": [{"text": "hi"}]}}
                        ],
                        "sessionInput": {"appName": "desk", "userId": "u", "state": {"k": 1}},
                    }
                ],
            }
        )
    )

    eval_set = EvalSet.load(source)

    assert eval_set.eval_set_id == "camel"
    assert eval_set.eval_cases[0].session_input is not None
    assert eval_set.eval_cases[0].session_input.state == {"k": 1}


def test_a_file_that_is_not_an_eval_set_is_a_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "bad.evalset.json"
    source.write_text('{"eval_cases": []}')

    with pytest.raises(ConfigurationError, match="is not an eval set"):
        EvalSet.load(source)
    with pytest.raises(ConfigurationError, match="cannot read"):
        EvalSet.load(tmp_path / "missing.evalset.json")


def test_a_recorded_session_becomes_a_case_that_passes_against_the_same_agent() -> None:
    agent = desk_agent()
    runner = InMemoryRunner(agent=agent, app_name="desk")
    config = RunConfig(auto_create_session=True)
    for question in ("Where is order 1234?", "hello there"):
        list(runner.run(user_id="u", session_id="s", new_message=question, run_config=config))
    session = runner.session_service.get_session(app_name="desk", user_id="u", session_id="s").run()
    assert session is not None

    recorded = EvalCase.from_session(session, eval_id="from_session")
    result = evaluate(desk_agent(), EvalSet(eval_set_id="rec", eval_cases=[recorded]))

    first, second = recorded.conversation
    assert [c.name for c in first.expected_tool_uses()] == ["lookup_order"]
    assert first.final_response is not None
    assert first.final_response.parts[0].text == "Order 1234 is shipped with DHL."  # type: ignore[index]
    assert second.expected_tool_uses() == []
    assert result.passed, result.cases[0]
    assert result.cases[0].scores == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 1.0,
    }
