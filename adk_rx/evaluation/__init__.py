"""Evaluating an agent on google-adk eval sets: ``evaluate(agent, eval_set)`` and friends.

- :class:`EvalSet` / :class:`EvalCase` read and write google-adk's ``*.evalset.json``;
  ``EvalCase.from_session(session)`` turns a recorded session into a regression case.
- :func:`evaluate` runs the cases on fresh sessions and scores ``tool_trajectory_avg_score``
  and ``response_match_score`` (ROUGE-1 F1) against thresholds.
- :class:`AgentEvaluator` does it inside a pytest test; ``adk-rx eval`` from the shell.
"""

from adk_rx.evaluation.agent_evaluator import AgentEvaluator
from adk_rx.evaluation.evalset import (
    EvalCase,
    EvalInvocation,
    EvalSet,
    IntermediateData,
    SessionInput,
)
from adk_rx.evaluation.evaluator import (
    DEFAULT_CRITERIA,
    CaseResult,
    EvalResult,
    TurnResult,
    criteria_from_config,
    evaluate,
)
from adk_rx.evaluation.scoring import rouge1_f1

__all__ = [
    "DEFAULT_CRITERIA",
    "AgentEvaluator",
    "CaseResult",
    "EvalCase",
    "EvalInvocation",
    "EvalResult",
    "EvalSet",
    "IntermediateData",
    "SessionInput",
    "TurnResult",
    "criteria_from_config",
    "evaluate",
    "rouge1_f1",
]
