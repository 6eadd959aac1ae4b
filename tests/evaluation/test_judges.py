"""LLM judges: the judge model, sampling and majority votes, unreadable or failed answers."""

from __future__ import annotations

from typing import Any

import pytest

from adk_rx import LlmRegistry, LlmRequest, LlmResponse
from adk_rx.evaluation import EvalConfig, EvalSet, EvalStatus, evaluate
from adk_rx.evaluation.final_response_match_v2 import parse_validity
from adk_rx.evaluation.hallucinations import parse_labels, parse_sentences
from adk_rx.evaluation.rubrics import parse_verdicts
from adk_rx.testing import ScriptedLlm

from .support import case, desk_agent, evalset_json, turn

LOOKUP = {"name": "lookup_order", "args": {"order_id": "1234"}}
VALID = '{"reasoning": "ok", "is_the_agent_response_valid": "valid"}'
INVALID = '{"reasoning": "no", "is_the_agent_response_valid": "invalid"}'


def one_case(*turns: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate(evalset_json(case("c", *turns)))


def shipped() -> dict[str, Any]:
    return turn("Where is order 1234?", "Order 1234 is shipped with DHL.", LOOKUP)


def judged(metric: str, judge: Any, **criterion: Any) -> EvalConfig:
    options = {"judge_model": judge, **criterion.pop("options", {})}
    return EvalConfig.from_mapping(
        {"criteria": {metric: {"threshold": 0.5, "judge_model_options": options, **criterion}}}
    )


def test_the_validity_label_is_read_as_google_adk_reads_it() -> None:
    assert parse_validity(VALID) is True
    assert parse_validity('{"is_the_agent_response_valid": ["true"],}') is True
    assert parse_validity('{"is_the_agent_response_valid": "almost"}') is False
    assert parse_validity('{"is_the_agent_response_invalid": "true"}') is False
    assert parse_validity('{"is_the_agent_response_valid": "maybe"}') is None
    assert parse_validity("no json at all") is None


@pytest.mark.parametrize(
    ("answers", "score"),
    [([VALID, INVALID, VALID], 1.0), ([VALID, INVALID], 0.0), (["?", "?", INVALID], 0.0)],
)
def test_samples_are_a_majority_vote_and_a_tie_is_invalid(answers: list[str], score: float) -> None:
    judge = ScriptedLlm(answers)
    config = judged("final_response_match_v2", judge, options={"num_samples": len(answers)})

    [result] = evaluate(desk_agent(), one_case(shipped()), config).cases

    assert result.scores == {"final_response_match_v2": score}
    assert len(judge.requests) == len(answers)
    assert judge.requests[0].config.automatic_function_calling.disable  # type: ignore[union-attr]


def test_a_turn_whose_judge_call_failed_is_not_evaluated_and_does_not_pass() -> None:
    judge = ScriptedLlm([VALID, RuntimeError("judge down")])
    config = judged("final_response_match_v2", judge, options={"num_samples": 2})

    [result] = evaluate(desk_agent(), one_case(shipped()), config).cases

    assert result.scores == {}
    assert result.status is EvalStatus.NOT_EVALUATED and not result.passed


def test_the_judge_is_resolved_by_name_through_the_llm_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A registry of the test's own, so the registration does not outlive it.
    monkeypatch.setattr(LlmRegistry, "_default", LlmRegistry(builtins=True))

    def answer(request: LlmRequest) -> LlmResponse:
        said = request.contents[0].parts[0].text or ""  # type: ignore[index]
        return LlmResponse.text(VALID if "DHL" in said else INVALID)

    LlmRegistry.register("test-judge-35", lambda name: ScriptedLlm([answer] * 5, model=name))
    config = judged("final_response_match_v2", "test-judge-35", options={"num_samples": 1})

    [result] = evaluate(desk_agent(), one_case(shipped()), config).cases

    assert result.passed and result.scores == {"final_response_match_v2": 1.0}


def test_an_unknown_judge_model_fails_the_case_with_its_name() -> None:
    config = judged("final_response_match_v2", "no-such-judge-35")

    [result] = evaluate(desk_agent(), one_case(shipped()), config).cases

    assert not result.passed
    assert "no-such-judge-35" in result.metric_errors["final_response_match_v2"]


def test_rubric_verdicts_need_as_many_rationales_and_verdicts_as_properties() -> None:
    answer = "ID: a\nProperty: One\nRationale: r\nVerdict: yes\n\nProperty: **Two**\nRationale: r\n"
    assert parse_verdicts(answer) == []  # one verdict short: nothing is believed
    [first, second] = parse_verdicts(answer + "Verdict: No.")
    assert (first.rubric_id, first.score) == ("a", 1.0)
    assert (second.rubric_id, second.property_text, second.score) == (None, "**Two**", 0.0)


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}
    return {**found, "type": kind} if kind else found


def test_rubric_scores_are_matched_by_id_or_text_and_a_turns_own_rubrics_count() -> None:
    first = shipped()
    first["rubrics"] = [rubric("own", "Says the carrier.", "FINAL_RESPONSE_QUALITY")]
    second = turn("Where is order 5678?", "Order 5678 is still being packed.")

    def answer(request: LlmRequest) -> LlmResponse:
        prompt = request.contents[0].parts[0].text or ""  # type: ignore[index]
        blocks = ["ID: short\nProperty: x\nRationale: r\nVerdict: yes"]
        if "[id: own]" in prompt:  # matched by its text, decorated as judges do
            blocks.append("Property: **says the Carrier.**\nRationale: r\nVerdict: no")
        return LlmResponse.text("\n\n".join(blocks))

    config = judged(
        "rubric_based_final_response_quality_v1",
        ScriptedLlm([answer] * 4),
        rubrics=[rubric("short", "The answer is short.")],
        options={"num_samples": 1},
    )
    [result] = evaluate(desk_agent(), one_case(first, second), config).cases

    # turn 1: short yes, own no; turn 2: short yes. google-adk drops "own" on turn 1 (it reads
    # every turn's answers with the last turn's rubrics) and would score 1.0.
    assert [t.scores["rubric_based_final_response_quality_v1"] for t in result.turns] == [0.5, 1.0]
    assert result.scores["rubric_based_final_response_quality_v1"] == pytest.approx(2 / 3)


def test_a_rubric_metric_without_rubrics_fails_the_case_with_a_clear_error() -> None:
    config = judged("rubric_based_tool_use_quality_v1", ScriptedLlm([]))

    [result] = evaluate(desk_agent(), one_case(shipped()), config).cases

    assert "needs rubrics" in result.metric_errors["rubric_based_tool_use_quality_v1"]


def test_hallucination_answers_are_read_sentence_by_sentence() -> None:
    assert parse_sentences("<sentence>A.</sentence>\n<sentence>B\nC</sentence>") == ["A.", "B\nC"]
    validated = (
        "sentence: A.\nlabel: supported\nrationale: r\nsupporting_excerpt: x\n"
        "contradicting_excerpt: null\nsentence: B.\nlabel: Disputed\nrationale: r\n"
        "supporting_excerpt: x\ncontradicting_excerpt: y\nsentence: C.\nlabel: odd\n"
        "rationale: r\nsupporting_excerpt: null\ncontradicting_excerpt: null"
    )
    assert parse_labels(validated) == [1.0, 0.0]


def test_hallucinations_score_the_share_of_supported_sentences() -> None:
    judge = ScriptedLlm(
        [
            "<sentence>Order 1234 is shipped</sentence><sentence>with DHL.</sentence>",
            "sentence: Order 1234 is shipped\nlabel: supported\nrationale: r\n"
            "supporting_excerpt: s\ncontradicting_excerpt: null\n"
            "sentence: with DHL.\nlabel: unsupported\nrationale: r\n"
            "supporting_excerpt: null\ncontradicting_excerpt: null",
        ]
    )

    [result] = evaluate(desk_agent(), one_case(shipped()), judged("hallucinations_v1", judge)).cases

    assert result.scores == {"hallucinations_v1": 0.5}
    validator_prompt = judge.requests[1].contents[0].parts[0].text or ""  # type: ignore[index]
    assert '"order_id": "1234"' in validator_prompt  # the tool call is in the context
