"""``adk-rx bench``: throughput and latency of a user's own agent, measured in process.

Each turn runs on a fresh in-memory session, streamed (SSE), so the time to the first event
is the time to the first token. ``concurrency`` turns are in flight at once: each is
subscribed on a worker of its own pool (a synchronous or replayed model would otherwise run
the turns one after another on one thread). The agent is loaded and one warm-up turn is run
before the clock starts, so the figures leave out the tool's own start-up.

Figures: turns/s and events/s over the wall time, percentiles of the time to the first
event and to the end of each turn, CPU time (all threads of the process) per turn, errors.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.runner import InMemoryRunner, Runner
from adk_rx.rx.subscribe_on import subscribe_on_eager

__all__ = ["BenchResult", "TurnTiming", "percentile", "run_bench"]


@dataclass(frozen=True)
class TurnTiming:
    """One turn, in seconds from the start of the run: started, first event, ended."""

    start: float
    first: float | None
    end: float
    events: int
    error: str | None = None


@dataclass
class BenchResult:
    """The figures of one ``adk-rx bench`` run (``to_dict()`` is what ``--json`` writes)."""

    agent: str
    turns: int
    concurrency: int
    message: str
    wall_seconds: float
    cpu_seconds: float
    timings: list[TurnTiming] = field(default_factory=list)

    @property
    def errors(self) -> int:
        """Turns that ended with an error."""
        return sum(1 for t in self.timings if t.error)

    @property
    def events(self) -> int:
        """Events received over all turns (partial ones included)."""
        return sum(t.events for t in self.timings)

    def latency_ms(self) -> dict[str, float]:
        """p50/p95/p99 of the time from a turn's start to its end, in ms."""
        return _percentiles([(t.end - t.start) * 1000 for t in self.timings])

    def first_event_ms(self) -> dict[str, float]:
        """p50/p95/p99 of the time from a turn's start to its first event, in ms."""
        return _percentiles(
            [(t.first - t.start) * 1000 for t in self.timings if t.first is not None]
        )

    def to_dict(self) -> dict[str, Any]:
        """All figures, plus each turn's timing, as JSON-ready values."""
        wall = self.wall_seconds or math.inf
        return {
            "agent": self.agent,
            "turns": self.turns,
            "concurrency": self.concurrency,
            "message": self.message,
            "wall_seconds": round(self.wall_seconds, 6),
            "turns_per_second": round(self.turns / wall, 3),
            "events": self.events,
            "events_per_second": round(self.events / wall, 3),
            "errors": self.errors,
            "time_to_first_event_ms": self.first_event_ms(),
            "latency_ms": self.latency_ms(),
            "cpu_ms_per_turn": round(self.cpu_seconds * 1000 / max(self.turns, 1), 3),
            "timings": [asdict(t) for t in self.timings],
        }


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _percentiles(values: list[float]) -> dict[str, float]:
    return {f"p{q}": round(percentile(values, q), 3) for q in (50, 95, 99)}


def run_bench(
    agent: BaseAgent,
    *,
    app_name: str,
    turns: int,
    concurrency: int,
    message: str,
    on_turn: Callable[[TurnTiming], None] | None = None,
    warmup: int = 1,
) -> BenchResult:
    """Runs ``turns`` turns, ``concurrency`` at a time, and measures them (blocking).

    Args:
        agent: the root agent (its own model, or whatever the caller put in place).
        app_name: the app the sessions belong to.
        turns: how many turns to measure.
        concurrency: how many turns are in flight at once.
        message: the user message of every turn.
        on_turn: called after each measured turn (from the thread that ended it).
        warmup: turns run (and not measured) before the clock starts.
    """
    if turns < 1 or concurrency < 1:
        raise ConfigurationError("turns and concurrency must be at least 1")
    runner = InMemoryRunner(agent=agent, app_name=app_name)
    pool = ThreadPoolScheduler(concurrency)
    origin = time.perf_counter()
    for _ in range(warmup):
        _turn(runner, message, origin).run()
    cpu_before = time.process_time()
    origin = time.perf_counter()
    lock = threading.Lock()

    def measured(timing: TurnTiming) -> TurnTiming:
        if on_turn is not None:
            with lock:
                on_turn(timing)
        return timing

    timings: list[TurnTiming] = (
        rx.from_iterable(range(turns))
        .pipe(
            ops.map(lambda _: _turn(runner, message, origin).pipe(subscribe_on_eager(pool))),
            ops.merge(max_concurrent=concurrency),
            ops.map(measured),
            ops.to_list(),
        )
        .run()
    )
    wall = time.perf_counter() - origin
    cpu = time.process_time() - cpu_before
    pool.executor.shutdown(wait=False)
    return BenchResult(
        agent=agent.name,
        turns=turns,
        concurrency=concurrency,
        message=message,
        wall_seconds=wall,
        cpu_seconds=cpu,
        timings=sorted(timings, key=lambda t: t.start),
    )


_session_numbers = itertools.count()


def _turn(runner: Runner, message: str, origin: float) -> Observable[TurnTiming]:
    """One measured turn on a fresh session: a Single of its timing (errors included)."""
    config = RunConfig(streaming_mode=StreamingMode.SSE, auto_create_session=True)

    def start(_: Any) -> Observable[TurnTiming]:
        started = time.perf_counter() - origin
        first: list[float] = []
        count = [0]

        def seen(_: Any) -> None:
            if not first:
                first.append(time.perf_counter() - origin)
            count[0] += 1

        def done(error: str | None) -> TurnTiming:
            end = time.perf_counter() - origin
            return TurnTiming(started, first[0] if first else None, end, count[0], error)

        return runner.run_async(
            user_id="bench",
            session_id=f"bench-{next(_session_numbers)}",
            new_message=message,
            run_config=config,
        ).pipe(
            ops.do_action(on_next=seen),
            ops.ignore_elements(),
            ops.to_list(),
            ops.map(lambda _: done(None)),
            ops.catch(lambda exc, _: rx.just(done(f"{type(exc).__name__}: {exc}"))),
        )

    return rx.defer(start)
