"""tool_trajectory_avg_score: EXACT, IN_ORDER and ANY_ORDER matching, with and without args."""

from __future__ import annotations

from google.genai import types

from adk_rx.evaluation import EvalInvocation, IntermediateData, ToolTrajectoryCriterion
from adk_rx.evaluation.criteria import EvalStatus
from adk_rx.evaluation.trajectory import TrajectoryEvaluator, trajectory_matches

MatchType = ToolTrajectoryCriterion.MatchType


def call(name: str, **args: object) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def test_exact_needs_the_same_calls_arguments_and_order() -> None:
    assert trajectory_matches([call("a", x=1), call("b")], [call("a", x=1.0), call("b")])
    assert not trajectory_matches([call("a", x=1)], [call("a", x=2)])
    assert not trajectory_matches([call("b"), call("a")], [call("a"), call("b")])
    assert not trajectory_matches([call("a")], [])
    assert trajectory_matches([], [])


def test_in_order_allows_other_calls_between_the_expected_ones() -> None:
    actual = [call("t1"), call("x"), call("t2"), call("y"), call("t3")]
    assert trajectory_matches(actual, [call("t1"), call("t2"), call("t3")], MatchType.IN_ORDER)
    assert not trajectory_matches(actual, [call("t2"), call("t1")], MatchType.IN_ORDER)
    assert not trajectory_matches(actual, [call("t1"), call("t4")], MatchType.IN_ORDER)
    assert trajectory_matches([], [], MatchType.IN_ORDER)


def test_any_order_needs_each_expected_call_once_in_any_order() -> None:
    actual = [call("t2"), call("x"), call("t1")]
    assert trajectory_matches(actual, [call("t1"), call("t2")], MatchType.ANY_ORDER)
    # one actual call cannot stand for two expected ones
    assert not trajectory_matches([call("t1")], [call("t1"), call("t1")], MatchType.ANY_ORDER)


def test_ignore_args_compares_names_only() -> None:
    assert trajectory_matches([call("a", x=1)], [call("a", x=2)], ignore_args=True)
    assert not trajectory_matches([call("a", x=1)], [call("a", x=2)])


def turn(*calls: types.FunctionCall) -> EvalInvocation:
    return EvalInvocation.model_validate(
        {
            "user_content": {"role": "user", "parts": [{"text": "hi"}]},
            "intermediate_data": IntermediateData(tool_uses=list(calls)),
        }
    )


def test_the_score_is_the_mean_of_the_turns_and_the_match_type_comes_from_the_config() -> None:
    criterion = ToolTrajectoryCriterion.model_validate({"threshold": 0.6, "match_type": "in-order"})
    assert criterion.match_type is MatchType.IN_ORDER
    actual = [turn(call("a"), call("b")), turn(call("c"))]
    expected = [turn(call("b")), turn(call("d"))]

    result = TrajectoryEvaluator(criterion).evaluate_invocations(actual, expected).run()

    assert [r.score for r in result.per_invocation] == [1.0, 0.0]
    assert result.overall_score == 0.5
    assert result.overall_status is EvalStatus.FAILED
