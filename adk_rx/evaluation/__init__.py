"""Evaluating an agent on google-adk eval sets: ``evaluate(agent, eval_set)`` and friends.

- :class:`EvalSet` / :class:`EvalCase` read and write google-adk's ``*.evalset.json``;
  ``EvalCase.from_session(session)`` turns a recorded session (approvals included) into a
  regression case; a case may instead hold a :class:`ConversationScenario` that a simulated
  user (:class:`LlmBackedUserSimulatorConfig`) plays.
- :func:`evaluate` runs the cases on fresh sessions and scores google-adk 2.13's metrics
  (:mod:`.metrics`) with its criteria shapes (:mod:`.criteria`, :class:`EvalConfig`); the
  judged ones run on any model adk_rx speaks.
- :class:`AgentEvaluator` does it inside a pytest test; ``adk-rx eval`` from the shell.
"""

from adk_rx.evaluation.agent_evaluator import AgentEvaluator
from adk_rx.evaluation.case_result import CaseResult, EvalResult, MetricOutcome, TurnResult
from adk_rx.evaluation.config import DEFAULT_CRITERIA, EvalConfig, criteria_from_config
from adk_rx.evaluation.criteria import (
    BaseCriterion,
    EvalStatus,
    HallucinationsCriterion,
    JudgeModelOptions,
    LlmAsAJudgeCriterion,
    Rubric,
    RubricContent,
    RubricsBasedCriterion,
    RubricScore,
    ToolTrajectoryCriterion,
)
from adk_rx.evaluation.evalset import (
    ConversationScenario,
    EvalCase,
    EvalInvocation,
    EvalSet,
    IntermediateData,
    Invocation,
    SessionInput,
)
from adk_rx.evaluation.evaluator import evaluate
from adk_rx.evaluation.intermediate import AppDetails, InvocationEvent, InvocationEvents
from adk_rx.evaluation.metrics import CLOUD_ONLY_METRICS, METRICS
from adk_rx.evaluation.scoring import rouge1_f1
from adk_rx.evaluation.simulation import LlmBackedUserSimulator, LlmBackedUserSimulatorConfig

__all__ = [
    "CLOUD_ONLY_METRICS",
    "DEFAULT_CRITERIA",
    "METRICS",
    "AgentEvaluator",
    "AppDetails",
    "BaseCriterion",
    "CaseResult",
    "ConversationScenario",
    "EvalCase",
    "EvalConfig",
    "EvalInvocation",
    "EvalResult",
    "EvalSet",
    "EvalStatus",
    "HallucinationsCriterion",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "JudgeModelOptions",
    "LlmAsAJudgeCriterion",
    "LlmBackedUserSimulator",
    "LlmBackedUserSimulatorConfig",
    "MetricOutcome",
    "Rubric",
    "RubricContent",
    "RubricScore",
    "RubricsBasedCriterion",
    "SessionInput",
    "ToolTrajectoryCriterion",
    "TurnResult",
    "criteria_from_config",
    "evaluate",
    "rouge1_f1",
]
