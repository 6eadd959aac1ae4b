"""What tracing costs: a simple turn and an SSE stream, with and without OpenTelemetry.

    python benchmarks/telemetry.py            # short default run
    python benchmarks/telemetry.py --runs 9   # more runs per figure

Three setups, each on the scripted model and the in-memory store:
  * off: no tracer or meter provider configured (the API's proxies): each invocation checks
    once and skips, the runtime's hooks see no scope;
  * sdk, no-op processor: the OpenTelemetry SDK records every span and drops it at the end;
  * in-memory exporter: the SDK plus a SimpleSpanProcessor into an InMemorySpanExporter.
Prints medians: microseconds per simple turn (3 spans: invocation, invoke_agent, call_llm),
SSE events per second (one invocation of 2,000 chunks), the cost per span with tracing on
(next to what a bare SDK span costs on the same machine, its floor), and the cost of the
"off" check against a simple turn. Times are the process's CPU time (``time.process_time``),
so other work on a shared machine disturbs them less. Needs the ``otel`` extra.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from google.genai import types
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_rx import InMemorySessionService, LlmAgent, LlmResponse, RunConfig, Runner, StreamingMode
from adk_rx.models.llm_response import model_content
from adk_rx.telemetry import Telemetry
from adk_rx.testing import ScriptedLlm

APP = "bench"
TURNS = 2000
CHUNKS = 2000
SPANS_PER_TURN = 3
SSE = RunConfig(streaming_mode=StreamingMode.SSE)


def _provider(setup: str) -> TracerProvider | None:
    if setup == "off":
        return None
    provider = TracerProvider()
    if setup == "sdk":
        provider.add_span_processor(SpanProcessor())  # the base class: does nothing
    else:
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def simple_turn_us(setup: str, turns: int = TURNS) -> float:
    """Microseconds per turn: create a session, run one text turn."""
    llm = ScriptedLlm([LlmResponse.text(f"reply {i}") for i in range(turns)])
    service = InMemorySessionService()
    runner = Runner(
        app_name=APP,
        agent=LlmAgent(name="bench_agent", model=llm, instruction="Answer briefly."),
        session_service=service,
        tracer_provider=_provider(setup),
    )
    messages = [
        types.Content(role="user", parts=[types.Part(text=f"hi {i}")]) for i in range(turns)
    ]
    gc.collect()
    start = time.process_time()
    for i in range(turns):
        session = service.create_session(app_name=APP, user_id="u").run()
        runner.run_async(user_id="u", session_id=session.id, new_message=messages[i]).subscribe()
    return (time.process_time() - start) / turns * 1e6


def calls_per_turn(setup: str, turns: int = 50) -> float:
    """Python and C function calls per simple turn (``sys.setprofile``): steady, unlike times."""
    llm = ScriptedLlm([LlmResponse.text(f"reply {i}") for i in range(turns + 1)])
    service = InMemorySessionService()
    runner = Runner(
        app_name=APP,
        agent=LlmAgent(name="bench_agent", model=llm, instruction="Answer briefly."),
        session_service=service,
        tracer_provider=_provider(setup),
    )

    def one_turn() -> None:
        session = service.create_session(app_name=APP, user_id="u").run()
        runner.run_async(user_id="u", session_id=session.id, new_message="hi").subscribe()

    one_turn()  # warm-up: first-use imports and caches
    calls = [0]

    def count(_frame: Any, event: str, _arg: Any) -> None:
        if event in ("call", "c_call"):
            calls[0] += 1

    sys.setprofile(count)
    try:
        for _ in range(turns):
            one_turn()
    finally:
        sys.setprofile(None)
    return calls[0] / turns


def sse_events_per_second(setup: str, chunks: int = CHUNKS) -> float:
    """One invocation streaming ``chunks`` partial events and the aggregate."""
    part = model_content(types.Part(text="x"))
    script = [LlmResponse(content=part, partial=True) for _ in range(chunks)]
    script.append(LlmResponse.text("x" * chunks, turn_complete=True))
    service = InMemorySessionService()
    runner = Runner(
        app_name=APP,
        agent=LlmAgent(name="streamer", model=ScriptedLlm([script])),
        session_service=service,
        tracer_provider=_provider(setup),
    )
    service.create_session(app_name=APP, user_id="u", session_id="s").run()
    received = [0]

    def count(_: Any) -> None:
        received[0] += 1

    gc.collect()
    start = time.process_time()
    runner.run_async(user_id="u", session_id="s", new_message="go", run_config=SSE).subscribe(count)
    elapsed = time.process_time() - start
    assert received[0] == chunks + 1, received
    return received[0] / elapsed


def off_check_us(repeats: int = 20_000) -> float:
    """Microseconds of the per-invocation check when nothing is configured."""
    telemetry = Telemetry()
    start = time.process_time()
    for _ in range(repeats):
        telemetry.start_invocation(app_name=APP, session_id="s")
    return (time.process_time() - start) / repeats * 1e6


def bare_sdk_span_us(repeats: int = 5000) -> float:
    """Microseconds to start and end one SDK span with a no-op processor (the floor)."""
    tracer = _provider("sdk").get_tracer("bench")  # type: ignore[union-attr]
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    start = time.process_time()
    for _ in range(repeats):
        tracer.start_span("span", attributes=attributes).end()
    return (time.process_time() - start) / repeats * 1e6


def _median(runs: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    runs = parser.parse_args().runs
    setups = {"off": "off", "sdk": "sdk, no-op processor", "memory": "in-memory exporter"}
    turn = {s: _median(runs, lambda s=s: simple_turn_us(s)) for s in setups}
    sse = {s: _median(runs, lambda s=s: sse_events_per_second(s)) for s in setups}
    check = _median(runs, off_check_us)
    bare = _median(runs, bare_sdk_span_us)
    calls = {s: calls_per_turn(s) for s in ("off", "sdk")}
    print(f"{'setup':<24}  {'simple turn':>12}  {'per span':>9}  {'SSE events/s':>13}")
    for key, label in setups.items():
        span = "" if key == "off" else f"{(turn[key] - turn['off']) / SPANS_PER_TURN:.1f} us"
        print(f"{label:<24}  {turn[key]:>9,.1f} us  {span:>9}  {sse[key]:>13,.0f}")
    print(
        f"tracing off: the per-invocation check costs {check:.2f} us = "
        f"{check / turn['off'] * 100:.2f}% of a simple turn (aim <= 3%); "
        f"SSE with the SDK: {sse['sdk'] / sse['off'] * 100:.0f}% of the events/s without it"
    )
    per_span = (turn["sdk"] - turn["off"]) / SPANS_PER_TURN
    print(
        f"tracing on (sdk, no-op processor): {per_span:.1f} us per span, of which the SDK's own "
        f"start+end is {bare:.1f} us and adk_rx's hooks {per_span - bare:.1f} us"
    )
    print(
        f"function calls per simple turn: {calls['off']:,.0f} off, {calls['sdk']:,.0f} with the "
        f"SDK (+{(calls['sdk'] - calls['off']) / SPANS_PER_TURN:.0f} per span, SDK included)"
    )
    print(
        f"(medians of {runs} runs; {TURNS} turns or {CHUNKS} chunks per run; aim per span <= 15 us)"
    )


if __name__ == "__main__":
    main()
