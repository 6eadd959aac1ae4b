"""adk_rx beside openai-agents and pydantic-ai: the same turns, fake models, one process.

    pip install -e '.[bench]'
    python benchmarks/compare_others.py     # a few minutes; --quick for a smoke run

Each framework runs with a fake model of its own kind that hands back answers built up
front, so the figures are the frameworks' own cost:

* simple turn: one user message, one text reply (microseconds per turn, fresh agent state);
* tool turn: the model calls ``add(a, b)``, the tool runs, the model answers (microseconds);
  adk_rx twice: its default (a sync tool runs on the I/O pool, as both others run sync tools
  on a worker thread: ``asyncio.to_thread`` in openai-agents, anyio's in pydantic-ai) and a
  tool marked as never blocking (run inline, which neither of the others offers);
* streaming: one reply of CHUNKS text chunks, each a separate event (events per second).

A framework that is not installed is skipped. Ratios are adk_rx's lead (> 1: adk_rx ahead).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import compare  # adk_rx's side of each workload, shared with the google-adk comparison

QUICK = "--quick" in sys.argv
TURNS = 100 if QUICK else 1_000
RUNS = 3 if QUICK else 5
compare.TURNS = TURNS


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def _per_turn(run_one: Callable[[], Any]) -> float:
    """Microseconds per turn of an async ``run_one`` over TURNS turns on one loop."""

    async def turns() -> float:
        gc.collect()
        start = time.perf_counter()
        for _ in range(TURNS):
            await run_one()
        return (time.perf_counter() - start) / TURNS * 1e6

    return asyncio.run(turns())


# -- pydantic-ai --------------------------------------------------------------------------------
def _pydantic_ai() -> dict[str, Callable[[], float]] | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        return None

    def simple() -> float:
        replies = [ModelResponse(parts=[TextPart(f"reply {i}")]) for i in range(TURNS)]

        def model(_: list[Any], __: AgentInfo) -> Any:
            return replies.pop()

        agent = Agent(FunctionModel(model), instructions="Answer.")
        return _per_turn(lambda: agent.run("hello"))

    def tool() -> float:
        def model(messages: list[Any], _: AgentInfo) -> Any:
            if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
                return ModelResponse(parts=[TextPart("the sum is 3")])
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])

        agent = Agent(FunctionModel(model), instructions="Answer.", tools=[add])
        return _per_turn(lambda: agent.run("hello"))

    def stream() -> float:
        async def chunks(_: list[Any], __: AgentInfo) -> AsyncIterator[str]:
            for _ in range(compare.CHUNKS):
                yield "x"

        agent = Agent(FunctionModel(stream_function=chunks))

        async def run() -> float:
            received = 0
            gc.collect()
            start = time.perf_counter()
            async with agent.run_stream("hello") as result:
                async for _ in result.stream_text(delta=True, debounce_by=None):
                    received += 1
            return received / (time.perf_counter() - start)

        return asyncio.run(run())

    return {"simple": simple, "tool": tool, "stream": stream}


# -- openai-agents ------------------------------------------------------------------------------
def _openai_agents() -> dict[str, Callable[[], float]] | None:
    try:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import (
            Response,
            ResponseCompletedEvent,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
            ResponseTextDeltaEvent,
        )
    except ImportError:
        return None
    set_tracing_disabled(True)

    def message(text: str) -> Any:
        part = ResponseOutputText(type="output_text", text=text, annotations=[])
        return ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed", content=[part]
        )

    class Fake(Model):
        """openai-agents' side of ScriptedLlm: answers built up front."""

        def __init__(self, with_tool: bool) -> None:
            self.with_tool = with_tool

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            items = args[1] if len(args) > 1 else kwargs["input"]
            answered = isinstance(items, list) and any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
            )
            if self.with_tool and not answered:
                call = ResponseFunctionToolCall(
                    type="function_call", call_id="c1", name="add", arguments='{"a":1,"b":2}'
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            return ModelResponse(output=[message("reply")], usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            for n in range(compare.CHUNKS):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    delta="x",
                    item_id="m",
                    output_index=0,
                    content_index=0,
                    sequence_number=n,
                    logprobs=[],
                )
            done = Response.model_construct(
                id="r", object="response", output=[message("x" * compare.CHUNKS)], usage=None
            )
            yield ResponseCompletedEvent(
                type="response.completed", response=done, sequence_number=compare.CHUNKS
            )

    def simple() -> float:
        agent = Agent(name="bench", instructions="Answer.", model=Fake(with_tool=False))
        return _per_turn(lambda: Runner.run(agent, "hello"))

    def tool() -> float:
        fake = Fake(with_tool=True)
        agent = Agent(name="bench", instructions="Answer.", model=fake, tools=[function_tool(add)])
        return _per_turn(lambda: Runner.run(agent, "hello"))

    def stream() -> float:
        agent = Agent(name="bench", model=Fake(with_tool=False))

        async def run() -> float:
            received = 0
            gc.collect()
            start = time.perf_counter()
            result = Runner.run_streamed(agent, "hello")
            async for event in result.stream_events():
                data = getattr(event, "data", None)
                if getattr(data, "type", "") == "response.output_text.delta":
                    received += 1
            return received / (time.perf_counter() - start)

        return asyncio.run(run())

    return {"simple": simple, "tool": tool, "stream": stream}


# -- the table ----------------------------------------------------------------------------------
def _median(fn: Callable[[], float]) -> float:
    fn()  # warm-up: imports, caches
    return statistics.median(fn() for _ in range(RUNS))


def main() -> None:
    ours = {
        "simple": _median(compare.rx_simple),
        "tool": _median(compare.rx_tool),
        "tool inline": _median(compare.rx_tool_inline),
        "stream": _median(compare.rx_sse),
    }
    rows = [
        ("simple turn, us", "simple", "simple", False),
        ("tool turn, us (adk_rx: tool on the I/O pool)", "tool", "tool", False),
        ("tool turn, us (adk_rx: never-blocking tool)", "tool inline", "tool", False),
        ("streaming, events/s", "stream", "stream", True),
    ]
    others = [("openai-agents", _openai_agents()), ("pydantic-ai", _pydantic_ai())]
    for name, workloads in others:
        if workloads is None:
            print(f"{name} is not installed: pip install -e '.[bench]'")
            continue
        theirs = {key: _median(fn) for key, fn in workloads.items()}
        print(f"\n{'workload':<46}{'adk_rx':>11}{name:>15}{'ratio':>8}  aim")
        for label, mine, other, higher_is_better in rows:
            ratio = ours[mine] / theirs[other] if higher_is_better else theirs[other] / ours[mine]
            print(f"{label:<46}{ours[mine]:>11,.1f}{theirs[other]:>15,.1f}{ratio:>7.1f}x  >= 3x")
    note = f"medians of {RUNS} runs after a warm-up, {TURNS} turns each; ratio > 1: adk_rx ahead"
    print(f"\n({note})")


if __name__ == "__main__":
    main()
