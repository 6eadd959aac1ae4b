"""``adk-rx bench --plot``: a latency histogram and the throughput over time, as one PNG."""

from __future__ import annotations

import itertools
import math

from adk_rx.cli.bench import BenchResult

__all__ = ["plot", "throughput"]


def throughput(result: BenchResult) -> tuple[list[float], list[float]]:
    """Turns/s in equal windows of the run: window centres (s) and rates.

    At most 20 windows and at least five turns a window on average (one window for a short
    run), so a short run does not plot empty windows as drops to zero; the last window holds
    the turn that ended the run.
    """
    ends = sorted(t.end for t in result.timings)
    count = max(1, min(20, len(ends) // 5))
    span = max(result.wall_seconds, ends[-1] if ends else 0.0, 1e-6)
    window = span / count
    edges = [window * i for i in range(count + 1)]
    buckets = list(itertools.pairwise(edges))
    rates = [
        sum(1 for e in ends if lo <= e < hi or (i == count - 1 and e >= hi)) / window
        for i, (lo, hi) in enumerate(buckets)
    ]
    return [(lo + hi) / 2 for lo, hi in buckets], rates


def plot(result: BenchResult, path: str) -> None:
    """Draws ``result`` into the PNG file ``path`` (matplotlib, headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latencies = [(t.end - t.start) * 1000 for t in result.timings]
    firsts = [(t.first - t.start) * 1000 for t in result.timings if t.first is not None]
    figure, (histogram, rate) = plt.subplots(1, 2, figsize=(11, 4))
    bins = max(10, min(50, int(math.sqrt(len(latencies))) * 2))
    histogram.hist(latencies, bins=bins, alpha=0.7, label="turn")
    if firsts:
        histogram.hist(firsts, bins=bins, alpha=0.7, label="first event")
    histogram.set_xlabel("ms")
    histogram.set_ylabel("turns")
    histogram.set_title("latency")
    histogram.legend()

    centres, rates = throughput(result)
    rate.plot(centres, rates, marker="o")
    rate.set_xlabel("s since start")
    rate.set_ylabel("turns/s")
    rate.set_title("throughput over time")
    figure.suptitle(f"{result.agent}: {result.turns} turns, {result.concurrency} at a time")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
