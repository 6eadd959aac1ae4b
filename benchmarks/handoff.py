"""Thread hand-off throughput: stock ``observe_on`` vs ``observe_on_bounded`` vs ``to_iterable``.

Every item crosses from a producer thread to a consumer thread. Each row is the median of 5
runs. Stock ``observe_on`` moves fewer items to keep the script short; its queue dequeues in
O(n), so it only gets slower with more items. The table says how many items each row moved.

Run from the repository root: ``PYTHONPATH=. python benchmarks/handoff.py`` (or with adk_rx
installed).
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import reactivex as rx
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.scheduler import EventLoopScheduler

from adk_rx.rx import observe_on_bounded, to_iterable

RUNS = 5
N = 200_000
N_STOCK = 50_000


def thread_source(count: int) -> rx.Observable[int]:
    """Emits ``range(count)`` from a thread of its own, stopping when disposed."""

    def subscribe(observer: abc.ObserverBase[int], _: Any = None) -> abc.DisposableBase:
        stop = threading.Event()

        def run() -> None:
            for i in range(count):
                if stop.is_set():
                    return
                observer.on_next(i)
            observer.on_completed()

        threading.Thread(target=run, daemon=True).start()
        return Disposable(stop.set)

    return rx.create(subscribe)


def push_through(operator: Callable[[rx.Observable[int]], rx.Observable[int]], n: int) -> float:
    """Seconds to move ``n`` items through ``operator`` to a subscriber."""
    done = threading.Event()
    received = 0

    def on_next(_: int) -> None:
        nonlocal received
        received += 1

    start = time.perf_counter()
    thread_source(n).pipe(operator).subscribe(on_next, on_completed=done.set)
    done.wait()
    elapsed = time.perf_counter() - start
    assert received == n
    return elapsed


def stock_observe_on(n: int) -> float:
    scheduler = EventLoopScheduler()
    try:
        return push_through(ops.observe_on(scheduler), n)
    finally:
        scheduler.dispose()


def bounded_block(n: int) -> float:
    scheduler = EventLoopScheduler()
    try:
        return push_through(observe_on_bounded(scheduler, 1024, "block"), n)
    finally:
        scheduler.dispose()


def pull_iterable(n: int) -> float:
    start = time.perf_counter()
    received = sum(1 for _ in to_iterable(thread_source(n), 1024))
    elapsed = time.perf_counter() - start
    assert received == n
    return elapsed


def median_rate(run: Callable[[int], float], n: int) -> float:
    print(f"... {run.__name__}: {RUNS} runs of {n:,} items", file=sys.stderr, flush=True)
    return statistics.median(n / run(n) for _ in range(RUNS))


def main() -> None:
    rows = [
        ("ops.observe_on(EventLoopScheduler())", N_STOCK, median_rate(stock_observe_on, N_STOCK)),
        ('observe_on_bounded(EventLoop, 1024, "block")', N, median_rate(bounded_block, N)),
        ("to_iterable(max_buffer=1024)", N, median_rate(pull_iterable, N)),
    ]
    baseline = rows[0][2]
    print(f"thread hand-off, items/s, median of {RUNS} runs")
    print(f"{'hand-off':<46} {'items':>8} {'items/s':>12} {'vs stock':>9}")
    for name, n, rate in rows:
        print(f"{name:<46} {n:>8,} {rate:>12,.0f} {rate / baseline:>8.1f}x")


if __name__ == "__main__":
    main()
