"""The judged metrics reach google-adk 2.13's verdicts with the same scripted judge.

The judge answers from what a prompt holds (and how often it was asked, so samples differ and
the majority vote matters); adk_rx's judge is a ScriptedLlm, google-adk's the same script as a
google-adk model. Both sides get the same turns and the same config entry; their scores must
be equal, and so must the prompts they sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from adk_rx.evaluation import EvalConfig, EvalSet, evaluate

from .oracle import JUDGE, JudgeScript, adk_rx_scores, google_adk_scores, said
from .support import evalset_json
from .test_oracle_deterministic import SHIPPED, agent, call, turn

FLIP_ON_SECOND_ASK = True


def _flip(verdict: bool, n: int) -> bool:
    # every second sample of a prompt disagrees: the majority of 3 keeps the first answer
    return not verdict if FLIP_ON_SECOND_ASK and n % 2 == 1 else verdict


def match_v2(prompt: str, n: int) -> str:
    response = said(prompt, '"Agent response":', '"Reference response":')
    valid = _flip("DHL" in response, n)
    label = "valid" if valid else "invalid"
    return f'{{\n  "reasoning": "checked",\n  "is_the_agent_response_valid": "{label}"\n}}'


def _rubrics(prompt: str) -> list[tuple[str, str]]:
    block = prompt.rsplit("<properties>", 1)[-1]
    listed = re.findall(r"\[id: ([^\]]+)\] (.*)", block)
    if listed:
        return listed
    return [(r["id"], r["property"]) for r in json.loads(block.split("</properties>")[0])]


def rubric_answer(section: tuple[str, str]) -> Any:
    def answer(prompt: str, n: int) -> str:
        looked_at = said(prompt.rsplit(section[0], 1)[-1], "", section[1]) or prompt
        blocks = []
        for rubric_id, text in _rubrics(prompt):
            keyword = text.split()[-1].strip(".")
            verdict = "yes" if _flip(keyword in looked_at, n) else "no"
            blocks.append(f"ID: {rubric_id}\nProperty: {text}\nRationale: r\nVerdict: {verdict}")
        return "\n\n".join(blocks)

    return answer


def hallucination_answer(prompt: str, n: int) -> str:
    if "segment the response into sentences" in prompt:
        response = said(prompt.rsplit("**Response Begin**", 1)[-1], "", "**Response End**")
        parts = [p.strip() for p in response.strip().split(". ") if p.strip()]
        return "\n".join(f"<sentence>{p}</sentence>" for p in parts)
    sentences = said(prompt.rsplit("**Sentences Begin**", 1)[-1], "", "**Sentences End**")
    blocks = []
    for sentence in re.findall(r"<sentence>(.*?)</sentence>", sentences, re.DOTALL):
        label = "supported" if "DHL" in sentence or "1234" in sentence else "unsupported"
        blocks.append(
            f"sentence: {sentence}\nlabel: {label}\nrationale: r\n"
            "supporting_excerpt: null\ncontradicting_excerpt: null"
        )
    return "\n\n".join(blocks)


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}
    return {**found, "type": kind} if kind else found


def eval_set() -> EvalSet:
    shipped = turn(
        "where are 1234 5678",
        SHIPPED,
        call("lookup_order", order_id="1234"),
        call("lookup_order", order_id="5678"),
        call("notify", channel="ops", count=2),
    )
    hello = turn("hello", "Hello! The parcel went with DHL.")
    # A turn's own rubrics only on the last turn: google-adk parses every turn's answers with
    # the rubrics of the last turn it formatted a prompt for, so on an earlier turn they are
    # dropped (adk_rx keeps them; see test_rubrics.py).
    hello["rubrics"] = [rubric("turn_notify", "The agent calls notify", "TOOL_USE_QUALITY")]
    cases = [
        {
            "eval_id": "two_turns",
            "conversation": [shipped, hello],
            "rubrics": [
                rubric("carrier", "The answer names the carrier DHL.", "FINAL_RESPONSE_QUALITY"),
                rubric("final_only", "The answer says hello", "FINAL_RESPONSE_QUALITY"),
            ],
        },
        {
            "eval_id": "greeting",
            "conversation": [hello],
            "rubrics": [rubric("ups", "It says UPS", "FINAL_RESPONSE_QUALITY")],
        },
    ]
    return EvalSet.model_validate(evalset_json(*cases))


JUDGED = [
    ("final_response_match_v2", {"threshold": 0.5}, match_v2),
    (
        "rubric_based_final_response_quality_v1",
        {"threshold": 0.6},
        rubric_answer(("<final_answer>", "</final_answer>")),
    ),
    (
        "rubric_based_tool_use_quality_v1",
        {"threshold": 0.6, "rubrics": [rubric("lookup", "The agent calls lookup_order")]},
        rubric_answer(("<response>", "</response>")),
    ),
    (
        "rubric_based_multi_turn_trajectory_quality_v1",
        {"threshold": 0.5, "rubrics": [rubric("says_shipped", "It says shipped")]},
        rubric_answer(("<conversation_history>", "</conversation_history>")),
    ),
    ("hallucinations_v1", {"threshold": 0.5}, hallucination_answer),
    (
        "hallucinations_v1",
        {"threshold": 0.5, "evaluate_intermediate_nl_responses": True},
        hallucination_answer,
    ),
]


@pytest.mark.parametrize(("metric", "criterion", "answer"), JUDGED)
def test_judged_scores_and_prompts_equal_google_adks(
    metric: str, criterion: Any, answer: Any
) -> None:
    options = {"judge_model": JUDGE, "num_samples": 3}
    entry = {**criterion, "judge_model_options": options}
    ours, theirs = JudgeScript(answer), JudgeScript(answer)
    judged_by_ours = {**options, "judge_model": ours.as_adk_rx_model()}
    config = EvalConfig.from_mapping(
        {"criteria": {metric: {**entry, "judge_model_options": judged_by_ours}}}
    )

    result = evaluate(agent(), eval_set(), config, concurrency=1)

    for case in result.cases:  # in order, as adk_rx ran them: the script counts repeated prompts
        assert case.error is None, case.error
        scores = adk_rx_scores(case, metric)
        assert scores == google_adk_scores(case, metric, entry, theirs), case.eval_id
        assert scores[0] is not None
    assert ours.prompts == theirs.prompts
    assert {case.eval_id: case.passed for case in result.cases}["two_turns"] in (True, False)
