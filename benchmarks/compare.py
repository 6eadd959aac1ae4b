"""adk_rx and google-adk side by side, in one process, on the same fake model workloads.

    pip install -e '.[bench]'        # google-adk (optional extra)
    python benchmarks/compare.py     # a few minutes; --quick for a smoke run

For each workload, both runtimes run the same scripted turns on their in-memory session
store, with model responses built before the clock starts, and the script prints the median
of 5 runs of each and the ratio (google-adk / adk_rx; above 1 means adk_rx is faster). When
google-adk is not installed it says so and prints adk_rx's figures alone. ``--model=user`` or
``--model=thread`` runs adk_rx with a user's own model instead of ScriptedLlm
(``user_models.py``; the concurrent row keeps its awaiting model).

Workloads: a simple turn (create a session, one text reply); a tool turn (the model calls
``add``, then answers); the same tool turn with a tool that says it never blocks (adk_rx runs
it inline; google-adk's turn is its ordinary tool turn); time to the first event of a simple
turn; SSE events per second (1,000 pre-built chunks and the aggregate); 1,000 concurrent
invocations whose model waits 50 ms on one asyncio loop; a graph workflow of 20 no-op
function nodes fanned out from START into a join (``workflow_graph.py``).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from google.genai import types
from reactivex import Observable
from user_models import KIND, model  # beside this script (run as a script)
from workflow_graph import gadk_graph, rx_graph

from adk_rx import InMemorySessionService, LlmAgent, RunConfig, Runner, StreamingMode
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.models.llm_response import model_content
from adk_rx.rx import from_async
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import FunctionTool

RUNS = 5
QUICK = "--quick" in sys.argv
TURNS = 100 if QUICK else 1_000
CHUNKS = 1_000
CONCURRENT = 200 if QUICK else 1_000
MODEL_WAIT = 0.05


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def _message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text="hello")])


def _call(n: int) -> types.Content:
    call = types.FunctionCall(name="add", args={"a": n, "b": 1})
    return types.Content(role="model", parts=[types.Part(function_call=call)])


def _chunks() -> list[types.Content]:
    return [model_content(types.Part(text="x")) for _ in range(CHUNKS)]


# -- adk_rx -------------------------------------------------------------------------------------
def _rx_turns(script: list[Any], tools: list[Any], turns: int) -> float:
    """Microseconds per turn on fresh sessions, each turn run to completion."""
    agent = LlmAgent(
        name="bench",
        model=model(script),
        instruction="Answer.",
        tools=tools,
    )
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    ids = [service.create_session(app_name="bench", user_id="u").run().id for _ in range(turns)]
    message = _message()
    done = threading.Event()
    gc.collect()
    start = time.perf_counter()
    for sid in ids:
        done.clear()
        runner.run_async(user_id="u", session_id=sid, new_message=message).subscribe(
            on_error=lambda e: (print(e), done.set()), on_completed=done.set
        )
        done.wait(10)
    return (time.perf_counter() - start) / turns * 1e6


def rx_simple() -> float:
    return _rx_turns([LlmResponse.text(f"reply {i}") for i in range(TURNS)], [], TURNS)


def _rx_tool_script() -> list[Any]:
    script: list[Any] = []
    for n in range(TURNS):
        script += [LlmResponse(content=_call(n)), f"the sum is {n + 1}"]
    return script


def rx_tool() -> float:
    return _rx_turns(_rx_tool_script(), [add], TURNS)


def rx_tool_inline() -> float:
    return _rx_turns(_rx_tool_script(), [FunctionTool(add, blocking=False)], TURNS)


def rx_first_event() -> float:
    """Microseconds from subscribing to the first event of a simple turn."""
    agent = LlmAgent(
        name="bench",
        model=model([LlmResponse.text("hi") for _ in range(TURNS)]),
        instruction="Answer.",
    )
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    ids = [service.create_session(app_name="bench", user_id="u").run().id for _ in range(TURNS)]
    message = _message()
    waits: list[float] = []
    for sid in ids:
        start = time.perf_counter()
        first: list[float] = []

        def on_next(_: Any, first: list[float] = first) -> None:
            if not first:
                first.append(time.perf_counter())

        done = threading.Event()
        runner.run_async(user_id="u", session_id=sid, new_message=message).subscribe(
            on_next, on_completed=done.set
        )
        done.wait(10)
        waits.append(first[0] - start)
    return statistics.median(waits) * 1e6


def rx_sse() -> float:
    """Events per second of one SSE invocation streaming CHUNKS chunks."""
    stream = [LlmResponse(content=c, partial=True) for c in _chunks()]
    stream.append(LlmResponse.text("x" * CHUNKS, turn_complete=True))
    agent = LlmAgent(name="bench", model=model([stream]))
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    sid = service.create_session(app_name="bench", user_id="u").run().id
    received = [0]
    done = threading.Event()
    gc.collect()
    start = time.perf_counter()
    runner.run_async(
        user_id="u",
        session_id=sid,
        new_message=_message(),
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    ).subscribe(lambda _: received.__setitem__(0, received[0] + 1), on_completed=done.set)
    done.wait(60)
    return received[0] / (time.perf_counter() - start)


def rx_concurrent() -> float:
    """Seconds for CONCURRENT invocations whose model awaits MODEL_WAIT, on one loop."""
    done = LlmResponse.text("done")

    def slow(_: LlmRequest) -> Observable[LlmResponse]:
        async def reply() -> LlmResponse:
            await asyncio.sleep(MODEL_WAIT)
            return done

        return from_async(reply)

    agent = LlmAgent(name="bench", model=ScriptedLlm([slow] * CONCURRENT, keep_requests=False))
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    ids = [
        service.create_session(app_name="bench", user_id="u").run().id for _ in range(CONCURRENT)
    ]
    message = _message()

    async def one(sid: str) -> int:
        return len(
            [e async for e in runner.run_events(user_id="u", session_id=sid, new_message=message)]
        )

    async def all_of_them() -> float:
        start = time.perf_counter()
        counts = await asyncio.gather(*(one(sid) for sid in ids))
        assert counts == [1] * CONCURRENT, counts[:3]
        return time.perf_counter() - start

    gc.collect()
    return asyncio.run(all_of_them())


# -- google-adk ---------------------------------------------------------------------------------
def _gadk() -> Any:
    try:
        import google.adk  # noqa: F401
    except ImportError:
        return None
    import logging

    logging.getLogger("google_adk").setLevel(logging.ERROR)  # a warning per turn otherwise
    from google.adk.agents import LlmAgent as GAgent
    from google.adk.agents.run_config import RunConfig as GRunConfig
    from google.adk.agents.run_config import StreamingMode as GStreamingMode
    from google.adk.models import BaseLlm as GBaseLlm
    from google.adk.models import LlmResponse as GResponse
    from google.adk.runners import Runner as GRunner
    from google.adk.sessions import InMemorySessionService as GSessions

    class Scripted(GBaseLlm):
        """google-adk's side of ScriptedLlm: pops pre-built responses."""

        script: list[Any] = []
        wait: float = 0.0

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncIterator[Any]:
            if self.wait:
                await asyncio.sleep(self.wait)
            item = self.script.pop(0)
            for response in item if isinstance(item, list) else [item]:
                yield response

    def text(t: str) -> Any:
        return GResponse(content=types.Content(role="model", parts=[types.Part(text=t)]))

    def runner(script: list[Any], tools: list[Any], wait: float = 0.0) -> tuple[Any, Any]:
        model = Scripted(model="scripted", script=script, wait=wait)
        agent = GAgent(name="bench", model=model, instruction="Answer.", tools=tools)
        sessions = GSessions()
        return GRunner(app_name="bench", agent=agent, session_service=sessions), sessions

    async def turns(r: Any, sessions: Any, n: int, config: Any = None) -> float:
        ids = [(await sessions.create_session(app_name="bench", user_id="u")).id for _ in range(n)]
        message = _message()
        gc.collect()
        start = time.perf_counter()
        for sid in ids:
            async for _ in r.run_async(
                user_id="u", session_id=sid, new_message=message, run_config=config
            ):
                pass
        return (time.perf_counter() - start) / n * 1e6

    def simple() -> float:
        r, s = runner([text(f"reply {i}") for i in range(TURNS)], [])
        return asyncio.run(turns(r, s, TURNS))

    def tool() -> float:
        script: list[Any] = []
        for n in range(TURNS):
            script += [GResponse(content=_call(n)), text(f"the sum is {n + 1}")]
        r, s = runner(script, [add])
        return asyncio.run(turns(r, s, TURNS))

    def first_event() -> float:
        r, s = runner([text("hi") for _ in range(TURNS)], [])

        async def run() -> float:
            waits = []
            for _ in range(TURNS):
                sid = (await s.create_session(app_name="bench", user_id="u")).id
                start = time.perf_counter()
                agen = r.run_async(user_id="u", session_id=sid, new_message=_message())
                async for _ in agen:
                    waits.append(time.perf_counter() - start)
                    break
                await agen.aclose()
            return statistics.median(waits) * 1e6

        return asyncio.run(run())

    def sse() -> float:
        stream = [GResponse(content=c, partial=True) for c in _chunks()]
        stream.append(
            GResponse(
                content=types.Content(role="model", parts=[types.Part(text="x" * CHUNKS)]),
                turn_complete=True,
            )
        )
        r, s = runner([stream], [])
        config = GRunConfig(streaming_mode=GStreamingMode.SSE)

        async def run() -> float:
            sid = (await s.create_session(app_name="bench", user_id="u")).id
            received = 0
            start = time.perf_counter()
            async for _ in r.run_async(
                user_id="u", session_id=sid, new_message=_message(), run_config=config
            ):
                received += 1
            return received / (time.perf_counter() - start)

        return asyncio.run(run())

    def concurrent() -> float:
        r, s = runner([text("done") for _ in range(CONCURRENT)], [], wait=MODEL_WAIT)

        async def run() -> float:
            ids = [
                (await s.create_session(app_name="bench", user_id="u")).id
                for _ in range(CONCURRENT)
            ]

            async def one(sid: str) -> None:
                async for _ in r.run_async(user_id="u", session_id=sid, new_message=_message()):
                    pass

            start = time.perf_counter()
            await asyncio.gather(*(one(sid) for sid in ids))
            return time.perf_counter() - start

        return asyncio.run(run())

    return {
        "simple": simple,
        "tool": tool,
        "tool_inline": tool,
        "first_event": first_event,
        "sse": sse,
        "concurrent": concurrent,
        "graph": gadk_graph,
    }


def _median(fn: Callable[[], float]) -> float:
    fn()  # warm-up
    return statistics.median(fn() for _ in range(RUNS))


def main() -> None:
    rows = [
        ("simple turn, us", "simple", rx_simple, False, ">= 25x"),
        ("tool turn, us", "tool", rx_tool, False, ">= 12x"),
        ("never-blocking tool turn, us", "tool_inline", rx_tool_inline, False, ">= 30x"),
        ("time to first event, us", "first_event", rx_first_event, False, ">= 20x"),
        ("SSE events/s", "sse", rx_sse, True, ">= 300,000/s"),
        (
            f"{CONCURRENT:,} concurrent 50 ms invocations, s",
            "concurrent",
            rx_concurrent,
            False,
            "<= 0.25 s",
        ),
        ("20-node fan-out/join graph, us", "graph", rx_graph, False, ">= 10x"),
    ]
    other = _gadk()
    if other is None:
        print("google-adk is not installed (pip install -e '.[bench]'): adk_rx figures only")
    print(f"{'workload':<40}{'adk_rx':>12}{'google-adk':>12}{'ratio':>9}  aim")
    for label, key, rx_fn, higher_is_better, aim in rows:
        mine = _median(rx_fn)
        theirs = _median(other[key]) if other is not None else None
        ratio = ""
        if theirs is not None:
            ratio = f"{(mine / theirs if higher_is_better else theirs / mine):.1f}x"
        places = 3 if key == "concurrent" else 1  # seconds, against an aim of 0.25 s
        shown = f"{theirs:,.{places}f}" if theirs is not None else "-"
        print(f"{label:<40}{mine:>12,.{places}f}{shown:>12}{ratio:>9}  {aim}")
    note = f"adk_rx with the {KIND} model; medians of {RUNS} runs after a warm-up"
    print(f"({note}; ratio > 1: adk_rx ahead)")


if __name__ == "__main__":
    main()
