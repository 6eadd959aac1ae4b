"""``evaluate(agent, eval_set)``: run every case on a fresh session and score it.

Each case is one cold Observable: create the session (state from ``session_input``), play
the user's side (:mod:`.replay`: the recorded turns, answers to pending calls included, or a
simulated user), group the events into turns (:mod:`.recording`), then score each metric of
the criteria (:mod:`.metrics`) one after the other. Cases run concurrently, at most
``concurrency`` at a time (``merge(max_concurrent=...)``), each under its own deadline (a
late case is disposed, so its run is cancelled like any other). A case whose agent errors or
times out is a failed case carrying the error; the other cases still run.

A case passes when every metric that could be scored reached its threshold and at least one
was scored (google-adk's final status). Unlike google-adk, a metric that raises (no rubrics
given, an unknown judge model) fails the case with the error instead of being skipped.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.case_result import CaseResult, EvalResult, MetricOutcome, TurnResult
from adk_rx.evaluation.config import DEFAULT_CRITERIA, Criteria, EvalConfig, as_criteria
from adk_rx.evaluation.criteria import BaseCriterion, EvalStatus
from adk_rx.evaluation.details_plugin import AppDetailsPlugin
from adk_rx.evaluation.evalset import EvalCase, EvalInvocation, EvalSet
from adk_rx.evaluation.intermediate import content_text, tool_calls
from adk_rx.evaluation.metrics import RESPONSE, TRAJECTORY, evaluator_for
from adk_rx.evaluation.recording import invocations_from_events
from adk_rx.evaluation.replay import play_case
from adk_rx.evaluation.simulation import LlmBackedUserSimulatorConfig
from adk_rx.events import Event
from adk_rx.runner import InMemoryRunner, Runner
from adk_rx.rx.schedulers import timer_scheduler

__all__ = ["DEFAULT_CRITERIA", "evaluate", "final_status"]

# These compare with the expected turns, which a simulated conversation does not have.
_NEEDS_EXPECTED = frozenset({TRAJECTORY, RESPONSE, "final_response_match_v2"})


def final_status(outcomes: Sequence[MetricOutcome]) -> EvalStatus:
    """FAILED when a metric failed or raised; PASSED when at least one passed; else
    NOT_EVALUATED (google-adk's rule, with a raising metric counted as a failure)."""
    status = EvalStatus.NOT_EVALUATED
    for outcome in outcomes:
        if outcome.error is not None or outcome.status is EvalStatus.FAILED:
            return EvalStatus.FAILED
        if outcome.status is EvalStatus.PASSED:
            status = EvalStatus.PASSED
    return status


def evaluate(
    agent: BaseAgent,
    eval_set: EvalSet,
    criteria: Criteria | EvalConfig | None = None,
    *,
    concurrency: int = 4,
    case_timeout: float = 120.0,
    runner: Runner | None = None,
    user_simulator_config: LlmBackedUserSimulatorConfig | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
) -> EvalResult:
    """Runs every case of ``eval_set`` against ``agent`` and scores it (blocking).

    Args:
        agent: the root agent.
        eval_set: the cases.
        criteria: metric -> threshold, criterion object or criterion (google-adk's config
            shapes), or an :class:`EvalConfig`; default ``DEFAULT_CRITERIA``.
        concurrency: how many cases run at once.
        case_timeout: seconds a case may take before it is cancelled and failed.
        runner: run on this Runner (default: an in-memory one for ``agent``, which also
            notes the agents' instructions and tools for the judges).
        user_simulator_config: the simulated user of scenario cases (default: the config's,
            else google-adk's defaults).
        on_case: called with each case's result as it finishes (e.g. a progress bar).

    Raises:
        ConfigurationError: ``concurrency`` below 1, or criteria that do not parse.
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    typed = as_criteria(criteria)
    if user_simulator_config is None and isinstance(criteria, EvalConfig):
        user_simulator_config = criteria.user_simulator_config
    details = AppDetailsPlugin()
    run_on = runner or InMemoryRunner(agent=agent, plugins=[details])
    play = _CasePlay(run_on, typed, case_timeout, user_simulator_config, details)
    cases = list(enumerate(eval_set.eval_cases))
    results: list[tuple[int, CaseResult]] = (
        rx.from_iterable(cases)
        .pipe(
            ops.map(
                lambda item: play.run(item[1]).pipe(
                    ops.do_action(on_case or _ignore),
                    ops.map(lambda result, i=item[0]: (i, result)),
                )
            ),
            ops.merge(max_concurrent=concurrency),
            ops.to_list(),
        )
        .run()
    )
    ordered = [result for _, result in sorted(results, key=lambda pair: pair[0])]
    return EvalResult(eval_set_id=eval_set.eval_set_id, cases=ordered, criteria=typed)


def _ignore(_: Any) -> None:
    return None


class _CasePlay:
    """How each case of one ``evaluate`` call runs and is scored."""

    def __init__(
        self,
        runner: Runner,
        criteria: Mapping[str, BaseCriterion],
        timeout: float,
        simulator: LlmBackedUserSimulatorConfig | None,
        details: AppDetailsPlugin,
    ) -> None:
        self.runner = runner
        self.criteria = criteria
        self.timeout = timeout
        self.simulator = simulator
        self.details = details

    def run(self, case: EvalCase) -> Observable[CaseResult]:
        """The case's result (cold; never errors: a failure is a failed result)."""
        return rx.defer(lambda _: self._start(case))

    def _start(self, case: EvalCase) -> Observable[CaseResult]:
        started = time.perf_counter()
        user_id = case.session_input.user_id if case.session_input else "eval_user"
        state = dict(case.session_input.state) if case.session_input else {}
        session_id: list[str] = [""]

        def play(session: Any) -> Observable[list[Event]]:
            session_id[0] = session.id
            return play_case(self.runner, case, user_id, session.id, self.simulator)

        def failed(error: Exception, _: Any) -> Observable[CaseResult]:
            described = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            return rx.just(
                CaseResult(
                    eval_id=case.eval_id,
                    criteria=self.criteria,
                    status=EvalStatus.FAILED,
                    error=described,
                    session_id=session_id[0],
                    user_id=user_id,
                    seconds=time.perf_counter() - started,
                    traceback="".join(traceback.format_exception(error)),
                )
            )

        def finish(scored: tuple[list[EvalInvocation], list[MetricOutcome]]) -> CaseResult:
            actual, outcomes = scored
            return CaseResult(
                eval_id=case.eval_id,
                criteria=self.criteria,
                status=final_status(outcomes),
                outcomes=outcomes,
                turns=_turns(actual, case.conversation, outcomes),
                session_id=session_id[0],
                user_id=user_id,
                seconds=time.perf_counter() - started,
            )

        return self.runner.session_service.create_session(
            app_name=self.runner.app_name, user_id=user_id, state=state
        ).pipe(
            ops.flat_map(play),
            ops.map(lambda events: self._actual(case, events)),
            ops.flat_map(lambda actual: self._score(case, actual)),
            ops.map(finish),
            ops.timeout(
                self.timeout,
                rx.throw(TimeoutError(f"the case took longer than {self.timeout:g} s")),
                scheduler=timer_scheduler(),
            ),
            ops.catch(failed),
        )

    def _actual(self, case: EvalCase, events: list[Event]) -> list[EvalInvocation]:
        turns = invocations_from_events(events, recorded=False)
        expected = case.conversation or []
        actual = []
        for index, turn in enumerate(turns):
            # google-adk copies the case's and the expected turn's rubrics onto the actual turn
            rubrics = [*(case.rubrics or [])]
            if index < len(expected):
                rubrics += expected[index].rubrics or []
            actual.append(
                EvalInvocation(
                    invocation_id=turn.invocation_id,
                    user_content=turn.user_content,
                    final_response=turn.final_response,
                    intermediate_data=turn.intermediate_data,
                    creation_timestamp=turn.creation_timestamp,
                    rubrics=rubrics or None,
                    app_details=self.details.details_of(turn.invocation_id),
                )
            )
        return actual

    def _score(
        self, case: EvalCase, actual: list[EvalInvocation]
    ) -> Observable[tuple[list[EvalInvocation], list[MetricOutcome]]]:
        scenario = case.conversation_scenario
        expected = None if scenario is not None else (case.conversation or [])

        def one(name: str, criterion: BaseCriterion) -> Observable[MetricOutcome]:
            if scenario is not None and name in _NEEDS_EXPECTED:
                return rx.just(MetricOutcome(name, criterion, note="needs expected turns"))
            evaluator = evaluator_for(name, criterion)
            return evaluator.evaluate_invocations(actual, expected, scenario).pipe(
                ops.map(lambda result: MetricOutcome(name, criterion, result=result)),
                ops.catch(
                    lambda error, _: rx.just(
                        MetricOutcome(name, criterion, error=f"{type(error).__name__}: {error}")
                    )
                ),
            )

        return rx.from_iterable(self.criteria.items()).pipe(
            ops.concat_map(lambda item: one(*item)),
            ops.to_list(),
            ops.map(lambda outcomes: (actual, outcomes)),
        )


def _turns(
    actual: list[EvalInvocation],
    expected: list[EvalInvocation] | None,
    outcomes: list[MetricOutcome],
) -> list[TurnResult]:
    turns = []
    for index, got in enumerate(actual):
        want = expected[index] if expected and index < len(expected) else None
        scores = {o.name: o.turn_score(index) for o in outcomes if o.result is not None}
        trajectory = scores.get(TRAJECTORY)
        turns.append(
            TurnResult(
                user_text=content_text(got.user_content) or "",
                expected_tool_uses=tool_calls(want.intermediate_data) if want else [],
                actual_tool_uses=tool_calls(got.intermediate_data),
                expected_response=content_text(want.final_response) if want else None,
                actual_response=content_text(got.final_response) or "",
                trajectory_match=None if trajectory is None else trajectory == 1.0,
                response_score=scores.get(RESPONSE),
                scores=scores,
                actual=got,
                expected=want,
            )
        )
    return turns
