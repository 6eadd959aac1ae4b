"""Evaluation offline: google-adk's metrics, a judge model, a simulated user, an approval.

Runs the support desk's eval set (its third case answers the refund's approval request) with a
google-adk config that adds judged metrics, then a scenario case played by a simulated user.
The judge and the simulated user are ``ScriptedLlm``s here; in real use they are model names
(``"gemini-2.5-flash"``, ``"openai/gpt-4o-mini"``, ``"claude-..."``) resolved through
``LlmRegistry``, or any ``BaseLlm``.

    python examples/evaluation_offline.py
"""

from __future__ import annotations

import re
from pathlib import Path

from adk_rx import LlmRequest, LlmResponse
from adk_rx.evaluation import EvalCase, EvalConfig, EvalSet, evaluate
from adk_rx.evaluation.agent_evaluator import describe_case
from adk_rx.loading import load_agent
from adk_rx.testing import ScriptedLlm

DESK = Path(__file__).with_name("support_desk")


def judge(request: LlmRequest) -> LlmResponse:
    """A stand-in judge: valid when the answer names an order; every rubric holds."""
    prompt = request.contents[0].parts[0].text or ""  # type: ignore[index]
    if "is_the_agent_response_valid" in prompt:
        answer = prompt.split('"Agent response":', 1)[1].split('"Reference response":', 1)[0]
        label = "valid" if "1234" in answer else "invalid"
        return LlmResponse.text(f'{{"reasoning": "-", "is_the_agent_response_valid": "{label}"}}')
    properties = prompt.rsplit("<properties>", 1)[1]
    ids = re.findall(r"\[id: ([^\]]+)\]", properties)
    return LlmResponse.text(
        "\n\n".join(f"ID: {i}\nProperty: -\nRationale: -\nVerdict: yes" for i in ids)
    )


def main() -> None:
    agent = load_agent(str(DESK))
    judge_options = {"judge_model": ScriptedLlm([judge] * 100), "num_samples": 3}
    config = EvalConfig.from_mapping(
        {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
                "response_match_score": 0.8,
                "final_response_match_v2": {
                    "threshold": 1.0,
                    "judge_model_options": judge_options,
                },
                "rubric_based_final_response_quality_v1": {
                    "threshold": 1.0,
                    "judge_model_options": judge_options,
                    "rubrics": [
                        {
                            "rubric_id": "polite",
                            "rubric_content": {"text_property": "The answer is polite."},
                        }
                    ],
                },
            }
        }
    )
    result = evaluate(agent, EvalSet.load(DESK / "evals" / "support_desk.evalset.json"), config)
    for case in result.cases:
        print(describe_case(case))
    print(f"recorded cases: {sum(c.passed for c in result.cases)} of {len(result.cases)} passed")

    # The desk's offline model answers only what it was recorded with, so the simulated user
    # opens with that question and is done after the answer.
    user = ScriptedLlm(["Thanks, that is all. </finished>"])
    scenario = EvalCase.model_validate(
        {
            "eval_id": "simulated_customer",
            "conversation_scenario": {
                "starting_prompt": "Where is my order 1234?",
                "conversation_plan": "Ask where order 1234 is; stop once you know.",
            },
        }
    )
    simulated = evaluate(
        agent,
        EvalSet(eval_set_id="simulated", eval_cases=[scenario]),
        EvalConfig.from_mapping(
            {
                "criteria": {
                    "rubric_based_final_response_quality_v1": {
                        "threshold": 1.0,
                        "judge_model_options": judge_options,
                        "rubrics": [
                            {
                                "rubric_id": "helpful",
                                "rubric_content": {"text_property": "The answer helps."},
                            }
                        ],
                    }
                },
                "user_simulator_config": {"model": user},
            }
        ),
    )
    [played] = simulated.cases
    print(f"simulated user said: {[t.user_text for t in played.turns]}")
    print(f"simulated case: {'passed' if played.passed else played.error} {played.scores}")


if __name__ == "__main__":
    main()
