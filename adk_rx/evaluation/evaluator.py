"""``evaluate(agent, eval_set)``: run every case on a fresh session and score it.

Each case is one cold Observable: create the session (state from ``session_input``), run its
turns in order (``concat_map``), score what the agents did. Cases run concurrently, at most
``concurrency`` at a time (``merge(max_concurrent=...)``), each under its own deadline (a
late case is disposed, so its run is cancelled like any other). A case whose agent errors or
times out is a failed case carrying the error; the other cases still run.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.evalset import EvalCase, EvalInvocation, EvalSet
from adk_rx.evaluation.scoring import rouge1_f1, trajectory_matches
from adk_rx.events import Event
from adk_rx.runner import InMemoryRunner, Runner
from adk_rx.rx.schedulers import timer_scheduler

__all__ = [
    "DEFAULT_CRITERIA",
    "CaseResult",
    "EvalResult",
    "TurnResult",
    "criteria_from_config",
    "evaluate",
]

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"
DEFAULT_CRITERIA: Mapping[str, float] = {TRAJECTORY: 1.0, RESPONSE: 0.8}
_INTERNAL_CALLS = frozenset({"adk_request_confirmation"})


@dataclass(frozen=True)
class TurnResult:
    """What one turn of a case did, next to what it should have done."""

    user_text: str
    expected_tool_uses: list[types.FunctionCall]
    actual_tool_uses: list[types.FunctionCall]
    expected_response: str | None
    actual_response: str
    trajectory_match: bool
    response_score: float | None


@dataclass(frozen=True)
class CaseResult:
    """The scores of one eval case.

    Attributes:
        eval_id: the case.
        scores: metric name -> score (a metric with nothing to score is left out).
        thresholds: metric name -> the threshold it had to reach.
        passed: every score reached its threshold and the agent did not fail.
        error: why the case failed to run (``"TypeError: ..."``), or None.
        turns: per turn, expected against actual.
        session_id: the session the case ran in.
        seconds: how long the case took.
    """

    eval_id: str
    scores: dict[str, float]
    thresholds: Mapping[str, float]
    passed: bool
    error: str | None = None
    turns: list[TurnResult] = field(default_factory=list)
    session_id: str = ""
    seconds: float = 0.0
    traceback: str | None = None

    def to_dict(self, eval_set_id: str) -> dict[str, Any]:
        """google-adk's eval case result shape (``final_eval_status`` 1 passed, 2 failed)."""
        return {
            "eval_set_id": eval_set_id,
            "eval_id": self.eval_id,
            "final_eval_status": 1 if self.passed else 2,
            "overall_eval_metric_results": [
                {
                    "metric_name": name,
                    "threshold": threshold,
                    "score": self.scores.get(name),
                    "eval_status": 1 if self.scores.get(name, 0.0) >= threshold else 2,
                }
                for name, threshold in self.thresholds.items()
            ],
            "eval_metric_result_per_invocation": [_turn_dict(t) for t in self.turns],
            "session_id": self.session_id,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class EvalResult:
    """The results of one eval set: ``passed`` and one :class:`CaseResult` per case."""

    eval_set_id: str
    cases: list[CaseResult]
    criteria: Mapping[str, float]

    @property
    def passed(self) -> bool:
        """True when every case passed."""
        return all(case.passed for case in self.cases)

    def to_dict(self) -> dict[str, Any]:
        """google-adk's eval set result shape, as written by ``adk-rx eval``."""
        created = time.time()
        return {
            "eval_set_result_id": f"{self.eval_set_id}_{created:.0f}",
            "eval_set_result_name": f"{self.eval_set_id}_{created:.0f}",
            "eval_set_id": self.eval_set_id,
            "eval_case_results": [case.to_dict(self.eval_set_id) for case in self.cases],
            "creation_timestamp": created,
        }


def criteria_from_config(config: Mapping[str, Any] | None) -> dict[str, float]:
    """Thresholds from google-adk's eval config (``{"criteria": {name: threshold}}``).

    A threshold may be a number or ``{"threshold": number, ...}``. Metrics left out keep
    their defaults only when ``criteria`` is missing altogether.

    Raises:
        ConfigurationError: an unknown metric or a threshold that is not a number.
    """
    if not config or "criteria" not in config:
        return dict(DEFAULT_CRITERIA)
    raw = config["criteria"]
    if not isinstance(raw, Mapping):
        raise ConfigurationError('eval config "criteria" must be an object of metric: threshold')
    criteria: dict[str, float] = {}
    for name, value in raw.items():
        if name not in DEFAULT_CRITERIA:
            raise ConfigurationError(
                f"metric {name!r} is not supported (supported: {', '.join(DEFAULT_CRITERIA)})"
            )
        threshold = value.get("threshold") if isinstance(value, Mapping) else value
        if not isinstance(threshold, int | float) or isinstance(threshold, bool):
            raise ConfigurationError(f"the threshold of {name!r} must be a number, got {value!r}")
        criteria[name] = float(threshold)
    return criteria


def evaluate(
    agent: BaseAgent,
    eval_set: EvalSet,
    criteria: Mapping[str, float] | None = None,
    *,
    concurrency: int = 4,
    case_timeout: float = 120.0,
    runner: Runner | None = None,
) -> EvalResult:
    """Runs every case of ``eval_set`` against ``agent`` and scores it (blocking).

    Args:
        agent: the root agent.
        eval_set: the cases.
        criteria: metric name -> threshold (default ``DEFAULT_CRITERIA``).
        concurrency: how many cases run at once.
        case_timeout: seconds a case may take before it is cancelled and failed.
        runner: run on this Runner (default: an in-memory one for ``agent``).
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    thresholds = dict(DEFAULT_CRITERIA if criteria is None else criteria)
    run_on = runner or InMemoryRunner(agent=agent)
    cases = list(enumerate(eval_set.eval_cases))
    results: list[tuple[int, CaseResult]] = (
        rx.from_iterable(cases)
        .pipe(
            ops.map(
                lambda item: _run_case(run_on, item[1], thresholds, case_timeout).pipe(
                    ops.map(lambda result, i=item[0]: (i, result))
                )
            ),
            ops.merge(max_concurrent=concurrency),
            ops.to_list(),
        )
        .run()
    )
    ordered = [result for _, result in sorted(results, key=lambda pair: pair[0])]
    return EvalResult(eval_set_id=eval_set.eval_set_id, cases=ordered, criteria=thresholds)


def _run_case(
    runner: Runner, case: EvalCase, thresholds: Mapping[str, float], timeout: float
) -> Observable[CaseResult]:
    def start(_: Any) -> Observable[CaseResult]:
        started = time.perf_counter()
        user_id = case.session_input.user_id if case.session_input else "eval_user"
        state = dict(case.session_input.state) if case.session_input else {}
        session_id: list[str] = [""]

        def turns(session: Any) -> Observable[list[list[Event]]]:
            session_id[0] = session.id
            return rx.from_iterable(case.conversation).pipe(
                ops.concat_map(
                    lambda turn: runner.run_async(
                        user_id=user_id, session_id=session.id, new_message=turn.user_content
                    ).pipe(ops.filter(lambda e: not e.partial), ops.to_list())
                ),
                ops.to_list(),
            )

        def scored(runs: list[list[Event]]) -> CaseResult:
            return _score(case, runs, thresholds, session_id[0], time.perf_counter() - started)

        def failed(error: Exception, _: Any) -> Observable[CaseResult]:
            described = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            return rx.just(
                CaseResult(
                    eval_id=case.eval_id,
                    scores={},
                    thresholds=thresholds,
                    passed=False,
                    error=described,
                    session_id=session_id[0],
                    seconds=time.perf_counter() - started,
                    traceback="".join(traceback.format_exception(error)),
                )
            )

        return runner.session_service.create_session(
            app_name=runner.app_name, user_id=user_id, state=state
        ).pipe(
            ops.flat_map(turns),
            ops.map(scored),
            ops.timeout(
                timeout,
                rx.throw(TimeoutError(f"the case took longer than {timeout:g} s")),
                scheduler=timer_scheduler(),
            ),
            ops.catch(failed),
        )

    return rx.defer(start)


def _score(
    case: EvalCase,
    runs: list[list[Event]],
    thresholds: Mapping[str, float],
    session_id: str,
    seconds: float,
) -> CaseResult:
    turns = [
        _turn(expected, events) for expected, events in zip(case.conversation, runs, strict=True)
    ]
    scores: dict[str, float] = {}
    if turns:
        scores[TRAJECTORY] = sum(t.trajectory_match for t in turns) / len(turns)
    responses = [t.response_score for t in turns if t.response_score is not None]
    if responses:
        scores[RESPONSE] = sum(responses) / len(responses)
    passed = all(scores.get(name, 1.0) >= threshold for name, threshold in thresholds.items())
    return CaseResult(
        eval_id=case.eval_id,
        scores=scores,
        thresholds=thresholds,
        passed=passed,
        turns=turns,
        session_id=session_id,
        seconds=seconds,
    )


def _turn(expected: EvalInvocation, events: list[Event]) -> TurnResult:
    calls = [c for e in events for c in e.get_function_calls() if c.name not in _INTERNAL_CALLS]
    finals = [e.text() for e in events if e.author != "user" and e.is_final_response() and e.text()]
    actual_text = finals[-1] if finals else ""
    want = _text(expected.final_response)
    want_calls = expected.expected_tool_uses()
    return TurnResult(
        user_text=_text(expected.user_content) or "",
        expected_tool_uses=want_calls,
        actual_tool_uses=calls,
        expected_response=want,
        actual_response=actual_text,
        trajectory_match=trajectory_matches(calls, want_calls),
        response_score=None if want is None else rouge1_f1(actual_text, want),
    )


def _text(content: types.Content | None) -> str | None:
    if content is None or not content.parts:
        return None
    return "".join(p.text for p in content.parts if p.text and not p.thought)


def _call_dict(call: types.FunctionCall) -> dict[str, Any]:
    return {"name": call.name, "args": call.args or {}}


def _turn_dict(turn: TurnResult) -> dict[str, Any]:
    return {
        "user_content": turn.user_text,
        "expected_tool_uses": [_call_dict(c) for c in turn.expected_tool_uses],
        "actual_tool_uses": [_call_dict(c) for c in turn.actual_tool_uses],
        "expected_response": turn.expected_response,
        "actual_response": turn.actual_response,
        "trajectory_match": turn.trajectory_match,
        "response_match_score": turn.response_score,
    }
