"""Governing a run: each limit hit once, offline, in virtual time where a clock is involved.

1. A budget: ``RunConfig(max_tool_calls=2)`` stops a model that keeps calling a tool; the
   session stores the refused call's answer and a BUDGET_EXCEEDED record, and the next turn
   works.
2. Cost: ``RunConfig(max_cost=, pricing=)`` stops once the priced tokens reach the limit;
   ``summarize_usage(events, pricing=)`` says what each agent spent.
3. A tool's own deadline: ``FunctionTool(fn, timeout=2)`` wins over ``RunConfig.tool_timeout``;
   at virtual second 2 the call is cancelled and the model hears which tool timed out.
4. A bulkhead: ``FunctionTool(fn, max_concurrency=1)``: two parallel calls run one after the
   other.
5. A scoped exit: ``exit_loop`` ends the inner ``LoopAgent`` only; the outer loop goes on.
6. Deduplicated calls: ``RunConfig(dedupe_tool_calls=True)`` answers a repeated call of an
   idempotent tool from the earlier response.

Run: ``python examples/governing.py`` (takes well under a second).
"""

from __future__ import annotations

import threading
from typing import Any

from google.genai import types
from reactivex.testing import TestScheduler

from adk_rx import (
    BudgetExceededError,
    FunctionTool,
    InMemoryRunner,
    LlmAgent,
    LoopAgent,
    RunConfig,
)
from adk_rx.events import Event
from adk_rx.models import LlmResponse
from adk_rx.testing import ScriptedLlm, simplify_events
from adk_rx.tools import exit_loop
from adk_rx.usage import ModelPrice, Pricing, summarize_usage


def call(name: str, fields: dict[str, Any] | None = None, **args: Any) -> LlmResponse:
    """A model response that calls ``name`` with ``args`` (``fields``: more of the response)."""
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]), **(fields or {}))


def turn(runner: InMemoryRunner, message: str, **config: Any) -> tuple[list[Event], str]:
    """One turn; its events and how it ended ("ok" or the error)."""
    events: list[Event] = []
    try:
        for event in runner.run(
            user_id="u", session_id="s", new_message=message, run_config=RunConfig(**config)
        ):
            events.append(event)
    except BudgetExceededError as exc:
        return (
            events,
            f"{type(exc).__name__}({exc.limit}, allowed={exc.allowed:g}, used={exc.used:g})",
        )
    return events, "ok"


def lookup(city: str) -> str:
    """Looks a city up."""
    return f"{city}: sunny"


def budget() -> None:
    model = ScriptedLlm([call("lookup", city=c) for c in ("Oslo", "Rome", "Lima")] + ["hello"])
    runner = InMemoryRunner(agent=LlmAgent(name="agent", model=model, tools=[lookup]))
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    events, ended = turn(runner, "weather everywhere", max_tool_calls=2)
    print("1. budget:", ended)
    print("   record:", events[-1].error_code, events[-1].custom_metadata)
    print("   refused call answered:", events[-2].get_function_responses()[0].response)
    _, again = turn(runner, "hi again")
    print("   next turn:", again)


def cost() -> None:
    pricing = Pricing({r"gemini-.*": ModelPrice(input_per_million=1.0, output_per_million=4.0)})
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=2_000, candidates_token_count=500, total_token_count=2_500
    )
    replies = [
        call("lookup", {"usage_metadata": usage, "model_version": "gemini-x"}, city=str(n))
        for n in range(5)
    ]
    runner = InMemoryRunner(
        agent=LlmAgent(name="agent", model=ScriptedLlm(replies), tools=[lookup])
    )
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    events, ended = turn(runner, "go", max_cost=0.01, pricing=pricing)
    spent = summarize_usage(events, pricing=pricing).cost
    assert spent is not None
    print("2. cost:", ended)
    print(f"   by agent: {dict((k, round(v, 4)) for k, v in spent.by_agent.items())}")


def deadline() -> None:
    clock = TestScheduler()
    started = threading.Event()

    def crunch(tool_context: Any) -> str:
        """Works until told to stop."""
        started.set()
        while not tool_context.cancelled:
            threading.Event().wait(0.001)
        return "stopped"

    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([call("crunch"), "sorry, that took too long"]),
        tools=[FunctionTool(crunch, timeout=2.0)],
    )
    runner = InMemoryRunner(agent=agent, timer_scheduler=clock)
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    events: list[Event] = []
    done = threading.Event()
    runner.run_async(
        user_id="u", session_id="s", new_message="go", run_config=RunConfig(tool_timeout=60)
    ).subscribe(events.append, on_completed=done.set)
    started.wait(5)
    clock.advance_to(2.0)  # virtual time: the tool's 2 s pass, RunConfig's 60 s do not
    done.wait(5)
    print("3. deadline:", events[-2].get_function_responses()[0].response)


def bulkhead() -> None:
    order: list[str] = []
    lock = threading.Lock()

    def fetch(page: int) -> str:
        """Fetches a page."""
        with lock:
            order.append(f"start {page}")
        threading.Event().wait(0.05)
        with lock:
            order.append(f"end {page}")
        return f"page {page}"

    both = LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(name="fetch", args={"page": n}))
                for n in (1, 2)
            ],
        )
    )
    tool = FunctionTool(fetch, max_concurrency=1)
    runner = InMemoryRunner(
        agent=LlmAgent(name="agent", model=ScriptedLlm([both, "done"]), tools=[tool])
    )
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    turn(runner, "fetch both")
    print("4. bulkhead:", order)


def scoped_exit() -> None:
    critic = LlmAgent(
        name="critic", model=ScriptedLlm(["draft", call("exit_loop")] * 2), tools=[exit_loop]
    )
    publish = LlmAgent(name="publish", model=ScriptedLlm(["chapter 1 out", "chapter 2 out"]))
    chapters = LoopAgent(
        name="chapters",
        sub_agents=[LoopAgent(name="refine", sub_agents=[critic], max_iterations=5), publish],
        max_iterations=2,
    )
    runner = InMemoryRunner(agent=chapters)
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    events, _ = turn(runner, "write the book")
    print("5. scoped exit:", [e for e in simplify_events(events) if e.startswith("publish")])


def dedupe() -> None:
    runs: list[str] = []

    def rate(currency: str) -> float:
        """Today's exchange rate."""
        runs.append(currency)
        return 1.08

    tool = FunctionTool(rate, idempotent=True)
    script = [call("rate", currency="EUR"), call("rate", currency="EUR"), "1.08"]
    runner = InMemoryRunner(agent=LlmAgent(name="agent", model=ScriptedLlm(script), tools=[tool]))
    runner.session_service.create_session(
        app_name=runner.app_name, user_id="u", session_id="s"
    ).run()
    events, _ = turn(runner, "rate?", dedupe_tool_calls=True)
    repeat = [e for e in events if e.get_function_responses()][-1]
    print("6. dedupe: ran", len(runs), "time(s); repeat", repeat.custom_metadata)


if __name__ == "__main__":
    budget()
    cost()
    deadline()
    bulkhead()
    scoped_exit()
    dedupe()
