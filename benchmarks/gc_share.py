"""The asynchronous path's memory: objects per waiting invocation and the GC's share of a run.

    python benchmarks/gc_share.py [--freeze] [-v]

Runs CONCURRENT invocations on one asyncio loop through ``Runner.run_events``, each with a
model that waits MODEL_WAIT on the loop (as a network call does), and prints: the wall time;
the objects the GC tracks per invocation while every one of them is waiting (counted when
the last one starts to wait); the collections run and the time spent in them (``gc.callbacks``)
as a share of the wall time. ``--freeze`` moves what start-up built into the permanent
generation first (``gc.freeze()``), as ``adk-rx api-server`` does after loading its apps.
``-v`` also lists, by type, what a waiting invocation holds (bound methods by class and
method, generators and coroutines by function), from one more run.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
from collections import Counter
from typing import Any

from google.genai import types

from adk_rx import InMemorySessionService, LlmAgent, Runner
from adk_rx.models import BaseLlm, LlmRequest, LlmResponse
from adk_rx.rx import from_async

CONCURRENT = 1_000
MODEL_WAIT = 0.05
RUNS = 3


class _Waiting(BaseLlm):
    """Waits MODEL_WAIT on the loop, then answers; counts the objects once all wait."""

    def __init__(self, expected: int) -> None:
        super().__init__(model="waiting")
        self.expected = expected
        self.waiting = 0
        self.tracked_at_peak = 0
        self.done = LlmResponse.text("done")
        self.known: set[int] | None = None  # with -v: the ids of the objects before the run
        self.held: Counter[str] = Counter()

    def generate_content(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        async def reply() -> LlmResponse:
            self.waiting += 1
            if self.waiting == self.expected:
                tracked = gc.get_objects()
                self.tracked_at_peak = len(tracked)
                if self.known is not None:
                    known = self.known
                    self.held.update(_kind(o) for o in tracked if id(o) not in known)
            await asyncio.sleep(MODEL_WAIT)
            return self.done

        return from_async(reply)


def _kind(held: object) -> str:
    """``held``'s type, with the class and method of a bound method, the function of a
    generator, coroutine or function."""
    kind = type(held).__name__
    if kind == "method":
        return f"method {type(held.__self__).__qualname__}.{held.__func__.__name__}"  # pyright: ignore[reportAttributeAccessIssue]
    if kind == "builtin_function_or_method":
        return f"builtin {type(held.__self__).__qualname__}.{held.__name__}"  # pyright: ignore[reportAttributeAccessIssue]
    if kind in ("function", "generator", "coroutine"):
        return f"{kind} {held.__qualname__}"  # pyright: ignore[reportAttributeAccessIssue]
    return type(held).__qualname__


def one_run(freeze: bool, held: Counter[str] | None = None) -> tuple[float, float, float, int]:
    """(seconds, objects per waiting invocation, GC seconds, collections) of one run;
    ``held`` receives the types of what the waiting invocations hold."""
    model = _Waiting(CONCURRENT)
    service = InMemorySessionService()
    runner = Runner(
        app_name="bench", agent=LlmAgent(name="b", model=model), session_service=service
    )
    ids = [
        service.create_session(app_name="bench", user_id="u").run().id for _ in range(CONCURRENT)
    ]
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    spent = [0.0, 0]
    started = [0.0]

    def watch(phase: str, _: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]
            spent[1] += 1

    async def one(sid: str) -> None:
        async for _ in runner.run_events(user_id="u", session_id=sid, new_message=message):
            pass

    async def all_of_them() -> tuple[float, int]:
        tracked = gc.get_objects()
        before = len(tracked)
        if held is not None:
            model.known = {id(o) for o in tracked}
        del tracked
        start = time.perf_counter()
        await asyncio.gather(*(one(sid) for sid in ids))
        return time.perf_counter() - start, before

    gc.collect()
    if freeze:
        gc.freeze()
    gc.callbacks.append(watch)
    try:
        seconds, before = asyncio.run(all_of_them())
    finally:
        gc.callbacks.remove(watch)
        if freeze:
            gc.unfreeze()
    per_invocation = (model.tracked_at_peak - before) / CONCURRENT
    if held is not None:
        held.update(model.held)
    return seconds, per_invocation, spent[0], int(spent[1])


def main() -> None:
    freeze = "--freeze" in sys.argv
    one_run(freeze)  # warm-up
    runs = [one_run(freeze) for _ in range(RUNS)]
    seconds = statistics.median(r[0] for r in runs)
    objects = statistics.median(r[1] for r in runs)
    gc_seconds = statistics.median(r[2] for r in runs)
    collections = statistics.median(r[3] for r in runs)
    print(f"{CONCURRENT:,} concurrent {MODEL_WAIT * 1000:.0f} ms invocations on one loop")
    print(f"  wall time, s                          {seconds:8.3f}   aim <= 0.25")
    print(f"  GC-tracked objects per waiting run     {objects:8.0f}")
    print(f"  GC collections                         {collections:8.0f}")
    print(
        f"  GC time, s (share of wall time)        {gc_seconds:8.3f}   ({gc_seconds / seconds:.0%})"
    )
    print(f"(medians of {RUNS} runs after a warm-up; freeze={'on' if freeze else 'off'})")
    if "-v" in sys.argv:
        held: Counter[str] = Counter()
        one_run(freeze, held)
        print("held per waiting invocation, by type (one more run; at least 0.5 each):")
        for kind, count in held.most_common():
            if count >= CONCURRENT / 2:
                print(f"  {count / CONCURRENT:6.2f}  {kind}")


if __name__ == "__main__":
    main()
