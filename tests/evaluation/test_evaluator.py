"""evaluate(): cases pass and fail as they should, errors and deadlines fail one case only."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import BaseLlm, LlmAgent, LlmRequest, LlmResponse
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation import EvalSet, criteria_from_config, evaluate
from adk_rx.rx.schedulers import io_scheduler
from adk_rx.testing import ScriptedLlm

from .support import case, desk_agent, evalset_json, turn

LOOKUP_1234 = {"name": "lookup_order", "args": {"order_id": "1234"}}


def eval_set(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate(evalset_json(*cases))


def test_a_matching_case_passes_with_full_scores() -> None:
    result = evaluate(
        desk_agent(),
        eval_set(
            case("ok", turn("Where is order 1234?", "Order 1234 is shipped with DHL.", LOOKUP_1234))
        ),
    )

    [only] = result.cases
    assert result.passed and only.passed and only.error is None
    assert only.scores == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}


def test_a_changed_tool_argument_fails_the_trajectory() -> None:
    wrong = {"name": "lookup_order", "args": {"order_id": "9999"}}
    result = evaluate(
        desk_agent(),
        eval_set(
            case("args", turn("Where is order 1234?", "Order 1234 is shipped with DHL.", wrong))
        ),
    )

    [only] = result.cases
    assert not result.passed
    assert only.scores["tool_trajectory_avg_score"] == 0.0
    assert only.scores["response_match_score"] == 1.0
    assert only.turns[0].actual_tool_uses[0].args == {"order_id": "1234"}


def test_a_changed_response_fails_the_response_match_but_not_the_trajectory() -> None:
    result = evaluate(
        desk_agent(),
        eval_set(
            case("resp", turn("Where is order 1234?", "Your parcel was lost at sea.", LOOKUP_1234))
        ),
    )

    [only] = result.cases
    assert not only.passed
    assert only.scores["tool_trajectory_avg_score"] == 1.0
    assert only.scores["response_match_score"] < 0.8


def test_thresholds_from_the_config_decide() -> None:
    data = case("loose", turn("Where is order 1234?", "Order 1234 was lost.", LOOKUP_1234))
    strict = evaluate(desk_agent(), eval_set(data))
    loose = evaluate(
        desk_agent(),
        eval_set(data),
        criteria_from_config({"criteria": {"response_match_score": {"threshold": 0.3}}}),
    )

    assert not strict.passed
    assert loose.passed
    assert loose.cases[0].thresholds == {"response_match_score": 0.3}


def test_config_errors_name_the_metric() -> None:
    with pytest.raises(ConfigurationError, match="no_such_metric"):
        criteria_from_config({"criteria": {"no_such_metric": 0.5}})
    with pytest.raises(ConfigurationError, match=r"safety_v1.*Vertex AI"):
        criteria_from_config({"criteria": {"safety_v1": 0.5}})
    with pytest.raises(ConfigurationError, match="response_match_score"):
        criteria_from_config({"criteria": {"response_match_score": "high"}})
    with pytest.raises(ConfigurationError, match=r"tool_trajectory_avg_score.*match_type"):
        criteria_from_config(
            {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "SOME"}}}
        )
    defaults = criteria_from_config(None)
    assert {name: c.threshold for name, c in defaults.items()} == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }


def test_a_case_whose_agent_raises_is_a_failed_case_and_the_others_still_run() -> None:
    result = evaluate(
        desk_agent(),
        eval_set(
            case("boom", turn("boom please", "whatever")),
            case(
                "ok",
                turn(
                    "Where is order 5678?",
                    "Order 5678 is still being packed.",
                    {"name": "lookup_order", "args": {"order_id": "5678"}},
                ),
            ),
        ),
    )

    boom, ok = result.cases
    assert (boom.eval_id, ok.eval_id) == ("boom", "ok")
    assert not boom.passed and boom.error is not None
    assert "the model fell over" in boom.error
    assert boom.traceback is not None and "RuntimeError" in boom.traceback
    assert ok.passed
    assert not result.passed


def test_a_case_past_its_deadline_is_cancelled_and_failed() -> None:
    disposed = threading.Event()

    class Hung(BaseLlm):
        def generate_content(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> Observable[LlmResponse]:
            return rx.never().pipe(ops.finally_action(disposed.set))

    agent = LlmAgent(name="slow", model=Hung(model="hung"))
    result = evaluate(agent, eval_set(case("slow", turn("hi", "hello"))), case_timeout=0.2)

    [only] = result.cases
    assert not only.passed
    assert only.error is not None and "longer than 0.2 s" in only.error
    assert disposed.wait(5)  # the run was cancelled, not left behind


def test_cases_run_concurrently_up_to_the_bound() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()
    gate = threading.Barrier(3, timeout=10)

    def answer(_: LlmRequest) -> LlmResponse:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        with contextlib.suppress(threading.BrokenBarrierError):  # a failed peak says why
            gate.wait()
        with lock:
            running -= 1
        return LlmResponse.text("hello")

    class Threaded(ScriptedLlm):
        def generate_content(self, llm_request: LlmRequest, stream: bool = False):  # type: ignore[override]
            return rx.defer(lambda _: rx.just(answer(llm_request))).pipe(
                ops.subscribe_on(io_scheduler())
            )

    agent = LlmAgent(name="conc", model=Threaded([]))
    cases = [case(f"c{i}", turn("hi", "hello")) for i in range(6)]
    result = evaluate(agent, eval_set(*cases), concurrency=3)

    assert result.passed
    assert peak == 3
    assert [c.eval_id for c in result.cases] == [f"c{i}" for i in range(6)]
