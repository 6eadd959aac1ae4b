"""Live session figures: round-trip latency and realtime blob throughput through run_live.

    PYTHONPATH=. python benchmarks/live.py

Prints medians of 5 runs, on the in-memory store with a scripted live model (so the figures
are the runtime's own cost, not a model's):
  * round trip: from ``queue.send_content`` to the first response event the subscriber gets
    (the user's turn is stored first, then the model's first chunk arrives), over 200 turns
    of one live session, p50 and p99;
  * realtime blobs: 20 ms audio frames (640 bytes, 16 kHz 16-bit mono) pushed into the
    queue as fast as a producer can, and how many reach the connection per second;
  * the producer's ``send_realtime`` call (p99), which must stay short: it never waits for the
    connection (a full buffer drops the oldest frame instead); a rare slow call is the GIL
    being held by the delivering thread, not a wait.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time

from google.genai import types

from adk_rx import InMemoryRunner, LiveRequestQueue, LlmAgent, LlmResponse, RunConfig
from adk_rx.testing import ScriptedLiveLlm

RUNS = 5
TURNS = 200
BLOBS = 20_000
FRAME = types.Blob(mime_type="audio/pcm;rate=16000", data=b"\x00" * 640)
AUTO = RunConfig(auto_create_session=True)


def _progress(text: str) -> None:
    print(f"  ... {text}", file=sys.stderr, flush=True)


def round_trip_ms() -> tuple[float, float]:
    """p50 and p99 of send_content -> first model event, in ms, over TURNS turns."""
    answer = [LlmResponse.text("ok", partial=True), LlmResponse.text("ok")]
    llm = ScriptedLiveLlm([answer] * TURNS)
    runner = InMemoryRunner(agent=LlmAgent(name="voice", model=llm))
    queue = LiveRequestQueue()
    arrived = threading.Event()

    def on_next(event: object) -> None:
        if getattr(event, "author", "") == "voice":
            arrived.set()

    subscription = runner.run_live(
        user_id="u", session_id="s", live_request_queue=queue, run_config=AUTO
    ).subscribe(on_next=on_next)
    samples: list[float] = []
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    for _ in range(TURNS):
        arrived.clear()
        start = time.perf_counter()
        queue.send_content(content)
        arrived.wait(10)
        samples.append((time.perf_counter() - start) * 1000)
    queue.close()
    subscription.dispose()
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def blob_throughput() -> tuple[float, float, int]:
    """Blobs reaching the connection per second, the p99 send call (us), drops."""
    llm = ScriptedLiveLlm([])
    runner = InMemoryRunner(agent=LlmAgent(name="ears", model=llm))
    queue = LiveRequestQueue(max_blobs=1024)
    done = threading.Event()
    subscription = runner.run_live(
        user_id="u", session_id="s", live_request_queue=queue, run_config=AUTO
    ).subscribe(on_completed=done.set, on_error=lambda _: done.set())
    calls: list[float] = []
    start = time.perf_counter()
    for _ in range(BLOBS):
        t = time.perf_counter()
        queue.send_realtime(FRAME)
        calls.append(time.perf_counter() - t)
    queue.close()
    done.wait(60)
    elapsed = time.perf_counter() - start
    subscription.dispose()
    delivered = sum(1 for item in llm.received if isinstance(item, types.Blob))
    calls.sort()
    return delivered / elapsed, calls[int(len(calls) * 0.99)] * 1e6, queue.dropped_blobs


def main() -> None:
    trips: list[tuple[float, float]] = []
    blobs: list[tuple[float, float, int]] = []
    for run in range(RUNS):
        _progress(f"run {run + 1} of {RUNS}")
        trips.append(round_trip_ms())
        blobs.append(blob_throughput())
    p50 = statistics.median(t[0] for t in trips)
    p99 = statistics.median(t[1] for t in trips)
    rate = statistics.median(b[0] for b in blobs)
    longest = statistics.median(b[1] for b in blobs)
    dropped = statistics.median(b[2] for b in blobs)
    print(f"round trip send_content -> first event: p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    print(
        f"realtime blobs into the connection:     {rate:,.0f} frames/s "
        f"({rate * 0.02:,.0f}x real time for 20 ms frames)"
    )
    print(
        f"send_realtime call, p99:                {longest:.1f} us "
        f"(dropped by the overflow policy: {dropped:.0f} of {BLOBS})"
    )


if __name__ == "__main__":
    main()
