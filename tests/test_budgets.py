"""Budgets: RunConfig's limits on model calls, tool runs, tokens and cost, per invocation.

Each limit ends the invocation like a deadline does: the open calls answered, a stored final
event ``error_code="BUDGET_EXCEEDED"`` with the figures, the stream errored with
BudgetExceededError; the next turn on the session works. Run on the in-memory and SQLite
stores, with sub-agents, transfer, AgentTool, parallel and loop agents.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from reactivex import operators as ops
from reactivex.notification import OnError, OnNext

from adk_rx import (
    AgentTool,
    BudgetExceededError,
    ConfigurationError,
    InMemorySessionService,
    LlmAgent,
    LlmCallsLimitExceededError,
    LoopAgent,
    ParallelAgent,
    RunConfig,
    Runner,
    SequentialAgent,
    SqlSessionService,
)
from adk_rx.events import Event
from adk_rx.models import LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.sessions.base import BaseSessionService
from adk_rx.testing import ScriptedLlm
from adk_rx.usage import ModelPrice, Pricing
from tests.reactive_support import USER, call_response, unanswered_calls

pytestmark = pytest.mark.timeout(30)


def lookup(city: str) -> str:
    """Looks a city up."""
    return f"{city}: sunny"


def usage(prompt: int, output: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=output, total_token_count=prompt + output
    )


def text(value: str, **fields: Any) -> LlmResponse:
    return LlmResponse(content=model_content(types.Part(text=value)), **fields)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseSessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
    else:
        service = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
        yield service
        service.close()


class Session:
    """A runner on one session; ``turn`` gives (events, error) of one run."""

    def __init__(self, agent: Any, store: BaseSessionService, **runner: Any) -> None:
        if agent is not None:
            runner.update(app_name="app", agent=agent)
        self.runner = Runner(session_service=store, **runner)
        store.create_session(app_name="app", user_id=USER, session_id="s1").run()

    def turn(self, message: str = "go", **config: Any) -> tuple[list[Event], Exception | None]:
        notes = (
            self.runner.run_async(
                user_id=USER, session_id="s1", new_message=message, run_config=RunConfig(**config)
            )
            .pipe(ops.materialize(), ops.to_list())
            .run()
        )
        events = [n.value for n in notes if isinstance(n, OnNext)]
        errors = [n.exception for n in notes if isinstance(n, OnError)]
        return events, (errors[0] if errors else None)

    def stored(self) -> list[Event]:
        session = self.runner.session_service.get_session(
            app_name="app", user_id=USER, session_id="s1"
        ).run()
        return list(session.events)


def budget_record(events: list[Event]) -> dict[str, Any]:
    last = events[-1]
    assert last.error_code == "BUDGET_EXCEEDED"
    assert last.custom_metadata is not None
    return last.custom_metadata["budget"]


def answers(events: list[Event]) -> dict[str, Any]:
    return {
        r.id: r.response for e in events for r in e.get_function_responses() if r.id is not None
    }


def test_max_tool_calls_stops_before_the_third_run_and_stores_the_record(
    store: BaseSessionService,
) -> None:
    runs: list[str] = []

    def count(city: str) -> str:
        """Looks a city up."""
        runs.append(city)
        return "ok"

    script = [call_response("count", {"city": c}, call_id=f"c{i}") for i, c in enumerate("abc")]
    session = Session(LlmAgent(name="root", model=ScriptedLlm(script), tools=[count]), store)

    events, error = session.turn(max_tool_calls=2)

    assert isinstance(error, BudgetExceededError)
    assert (error.limit, error.allowed, error.used) == ("max_tool_calls", 2, 2)
    assert runs == ["a", "b"]
    stored = session.stored()
    assert budget_record(stored) == {"limit": "max_tool_calls", "allowed": 2, "used": 2}
    assert answers(stored)["c2"] == {"error": "budget exceeded: max_tool_calls"}
    assert events[-1].error_code == "BUDGET_EXCEEDED"  # the subscriber sees the record too
    assert [e.id for e in events] == [e.id for e in stored if e.author != "user"]


def test_the_next_turn_after_a_budget_stop_works(store: BaseSessionService) -> None:
    llm = ScriptedLlm([call_response("lookup", {"city": "Oslo"}), "fine again"])
    session = Session(LlmAgent(name="root", model=llm, tools=[lookup]), store)

    _, error = session.turn(max_tool_calls=0)
    events, after = session.turn("and now?")

    assert isinstance(error, BudgetExceededError)
    assert after is None
    assert events[-1].text() == "fine again"
    assert unanswered_calls(llm.requests[-1]) == set()


def test_max_llm_calls_stores_the_same_record_and_raises_its_subclass(
    store: BaseSessionService,
) -> None:
    llm = ScriptedLlm([call_response("lookup", {"city": str(n)}) for n in range(5)])
    session = Session(LlmAgent(name="root", model=llm, tools=[lookup]), store)

    _, error = session.turn(max_llm_calls=2)

    assert isinstance(error, LlmCallsLimitExceededError)
    assert isinstance(error, BudgetExceededError)
    assert len(llm.requests) == 2
    assert budget_record(session.stored()) == {"limit": "max_llm_calls", "allowed": 2, "used": 2}


def test_max_tokens_lets_the_response_that_crosses_the_line_stand_then_stops(
    store: BaseSessionService,
) -> None:
    script = [
        call_response("lookup", {"city": "a"}, usage_metadata=usage(40, 20)),
        call_response("lookup", {"city": "b"}, call_id="late", usage_metadata=usage(50, 20)),
        "never asked",
    ]
    llm = ScriptedLlm(script)
    session = Session(LlmAgent(name="root", model=llm, tools=[lookup]), store)

    _, error = session.turn(max_tokens=100)

    assert isinstance(error, BudgetExceededError)
    assert len(llm.requests) == 2
    stored = session.stored()
    assert budget_record(stored) == {"limit": "max_tokens", "allowed": 100, "used": 130}
    assert answers(stored)["late"] == {"error": "budget exceeded: max_tokens"}


def test_max_cost_prices_the_tokens_by_the_model_name(store: BaseSessionService) -> None:
    pricing = Pricing(
        {
            r"cheap-.*": ModelPrice(input_per_million=1.0, output_per_million=2.0),
            r".*": ModelPrice(input_per_million=100.0, output_per_million=100.0),
        }
    )
    script = [
        call_response("lookup", {"city": str(n)}, usage_metadata=usage(1_000, 500))
        for n in range(4)
    ]
    llm = ScriptedLlm(script, model="cheap-1")
    session = Session(LlmAgent(name="root", model=llm, tools=[lookup]), store)

    _, error = session.turn(max_cost=0.005, pricing=pricing)

    # each response costs 1000 * 1e-6 + 500 * 2e-6 = 0.002: the third one crosses 0.005
    assert isinstance(error, BudgetExceededError) and error.limit == "max_cost"
    assert len(llm.requests) == 3
    record = budget_record(session.stored())
    assert record["allowed"] == 0.005
    assert record["used"] == pytest.approx(0.006)


def test_max_cost_needs_pricing() -> None:
    with pytest.raises(ConfigurationError, match="pricing"):
        RunConfig(max_cost=1.0)


def test_a_turn_inside_its_budgets_stores_no_record(store: BaseSessionService) -> None:
    llm = ScriptedLlm([call_response("lookup", {"city": "a"}, usage_metadata=usage(5, 5)), "ok"])
    session = Session(LlmAgent(name="root", model=llm, tools=[lookup]), store)

    events, error = session.turn(max_tool_calls=1, max_tokens=1_000, max_llm_calls=2)

    assert error is None
    assert events[-1].text() == "ok"
    assert all(e.error_code is None for e in session.stored())


# -- one budget for the whole invocation ------------------------------------------------------


def test_transfer_and_sub_agents_share_the_budget(store: BaseSessionService) -> None:
    child_llm = ScriptedLlm([call_response("lookup", {"city": "b"}, call_id="c-child"), "done"])
    child = LlmAgent(name="child", model=child_llm, tools=[lookup])
    root_llm = ScriptedLlm(
        [
            call_response("lookup", {"city": "a"}),
            call_response("transfer_to_agent", {"agent_name": "child"}),
        ]
    )
    root = LlmAgent(name="root", model=root_llm, tools=[lookup], sub_agents=[child])
    session = Session(root, store)

    _, error = session.turn(max_tool_calls=2)  # lookup + transfer; the child's lookup is over

    assert isinstance(error, BudgetExceededError)
    stored = session.stored()
    assert budget_record(stored)["used"] == 2
    assert stored[-1].author == "child"
    assert answers(stored)["c-child"] == {"error": "budget exceeded: max_tool_calls"}


def test_an_agent_tool_child_spends_the_callers_budget(store: BaseSessionService) -> None:
    child_llm = ScriptedLlm([call_response("lookup", {"city": str(n)}) for n in range(5)])
    helper = LlmAgent(name="helper", model=child_llm, tools=[lookup])
    root_llm = ScriptedLlm([call_response("helper", {"request": "go"}, call_id="ask"), "unused"])
    session = Session(LlmAgent(name="root", model=root_llm, tools=[AgentTool(helper)]), store)

    _, error = session.turn(max_llm_calls=3)

    # root: 1 call; helper: 2 calls, then its third is refused
    assert isinstance(error, LlmCallsLimitExceededError)
    assert len(root_llm.requests) == 1 and len(child_llm.requests) == 2
    stored = session.stored()
    assert budget_record(stored) == {"limit": "max_llm_calls", "allowed": 3, "used": 3}
    assert answers(stored)["ask"] == {"error": "budget exceeded: max_llm_calls"}


def test_parallel_branches_share_one_tool_budget(store: BaseSessionService) -> None:
    def branch(name: str) -> LlmAgent:
        llm = ScriptedLlm(
            [call_response("lookup", {"city": name}, call_id=f"{name}-{n}") for n in range(9)]
        )
        return LlmAgent(name=name, model=llm, tools=[lookup])

    fan = ParallelAgent(name="fan", sub_agents=[branch("left"), branch("right")])
    session = Session(fan, store)

    _, error = session.turn(max_tool_calls=3)

    assert isinstance(error, BudgetExceededError)
    stored = session.stored()
    assert budget_record(stored) == {"limit": "max_tool_calls", "allowed": 3, "used": 3}
    ran = [r for r in answers(stored).values() if "result" in r]
    assert len(ran) <= 3
    assert not {c.id for e in stored for c in e.get_function_calls()} - set(answers(stored))


def test_a_loop_ends_on_the_budget_not_its_iterations(store: BaseSessionService) -> None:
    worker_llm = ScriptedLlm(["round"] * 50)
    loop = LoopAgent(
        name="loop", sub_agents=[LlmAgent(name="worker", model=worker_llm)], max_iterations=10
    )
    session = Session(SequentialAgent(name="root", sub_agents=[loop]), store)

    _, error = session.turn(max_llm_calls=4)

    assert isinstance(error, LlmCallsLimitExceededError)
    assert len(worker_llm.requests) == 4
    assert budget_record(session.stored())["used"] == 4


def test_a_graph_workflows_agent_nodes_share_the_budget(store: BaseSessionService) -> None:
    from adk_rx.workflow import START, Workflow

    first_llm = ScriptedLlm([call_response("lookup", {"city": "a"}), "first done"])
    second_llm = ScriptedLlm([call_response("lookup", {"city": "b"}, call_id="late"), "x"])
    first = LlmAgent(name="first", model=first_llm, tools=[lookup])
    second = LlmAgent(name="second", model=second_llm, tools=[lookup])
    session = Session(Workflow(name="wf", edges=[(START, first, second)]), store)

    _, error = session.turn(max_tool_calls=1)

    assert isinstance(error, BudgetExceededError)
    stored = session.stored()
    assert budget_record(stored) == {"limit": "max_tool_calls", "allowed": 1, "used": 1}
    assert answers(stored)["late"] == {"error": "budget exceeded: max_tool_calls"}


def test_a_resumable_app_records_the_stop_and_its_next_turn_works(
    store: BaseSessionService,
) -> None:
    from adk_rx import App, ResumabilityConfig

    llm = ScriptedLlm(
        [call_response("lookup", {"city": "a"}), call_response("lookup", {"city": "b"}), "hi"]
    )
    app = App(
        name="app",
        root_agent=LlmAgent(name="root", model=llm, tools=[lookup]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    session = Session(None, store, app=app)

    _, error = session.turn(max_tool_calls=1)
    events, after = session.turn("again")

    assert isinstance(error, BudgetExceededError)
    assert after is None and "hi" in [e.text() for e in events]
    assert unanswered_calls(llm.requests[-1]) == set()  # the refused call: "interrupted"
    assert budget_record([e for e in session.stored() if e.error_code])["used"] == 1


def test_a_workflow_node_that_runs_out_of_budget_is_not_retried(store: BaseSessionService) -> None:
    from adk_rx.workflow import START, RetryConfig, Workflow, node

    llm = ScriptedLlm([call_response("lookup", {"city": str(n)}) for n in range(9)])
    worker = LlmAgent(name="worker", model=llm, tools=[lookup])
    retried = node(worker, retry_config=RetryConfig(max_attempts=5, initial_delay=30.0))
    session = Session(Workflow(name="wf", edges=[(START, retried)]), store)

    _, error = session.turn(max_llm_calls=2)

    assert isinstance(error, LlmCallsLimitExceededError)
    assert len(llm.requests) == 2  # no second attempt (and no 30 s wait before one)
