"""Disposing a streaming run after k events, and what the producer did after the dispose.

A model streams 1000 chunks from a worker thread (a blocking iterator, like a sync client).
The subscriber takes K events (``ops.take(k)`` disposes the subscription right after the
K-th). The example reports how many
chunks the producer made after the dispose (adk_rx stops a sync producer at its next item),
whether its ``finally`` ran, and what the session stored: no partial event, and a
``CANCELLED`` record saying where the invocation stopped.

What to expect: with a large K the producer makes no chunk after the dispose. With a small
K (1, 5) it may make some dozens: the K-th event reaches the subscriber on the producer's
thread before ``subscribe()`` has returned on the caller's thread, and RxPY applies a
disposal that arrives before the subscription is assigned only once ``subscribe()``
returns; until then a fast producer on another thread keeps going (its chunks are dropped,
nothing is stored). Subscribing first and disposing from the caller's thread (or from an
``on_next`` after ``subscribe()`` returned) stops it at its next item.

Run: ``python examples/dispose_after_k.py [K]`` (default 5).
"""

from __future__ import annotations

import sys
import threading

from google.genai import types
from reactivex import operators as ops

from adk_rx import InMemoryRunner, LlmAgent, RunConfig, StreamingMode
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.models.base import BaseLlm
from adk_rx.rx import from_blocking_iterable


class CountingStream(BaseLlm):
    """Streams numbered chunks, counting what it produced and noting when it stopped."""

    produced = 0
    closed = threading.Event()

    def generate_content(self, llm_request: LlmRequest, stream: bool = False):
        def chunks():
            try:
                for i in range(1000):
                    CountingStream.produced += 1
                    part = types.Part(text=f"c{i} ")
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[part]), partial=True
                    )
            finally:
                CountingStream.closed.set()

        return from_blocking_iterable(chunks)


def run(k: int) -> dict[str, object]:
    """Runs one streaming turn, disposes after ``k`` events; returns what it observed."""
    runner = InMemoryRunner(agent=LlmAgent(name="streamer", model=CountingStream(model="c")))
    session = runner.session_service.create_session(app_name="streamer", user_id="u").run()
    received: list[str] = []
    at_dispose: list[int] = []

    def on_next(event) -> None:
        received.append(event.text())
        if len(received) == k:  # take(k) disposes the run right after this event
            at_dispose.append(CountingStream.produced)

    runner.run_async(
        user_id="u",
        session_id=session.id,
        new_message="stream please",
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    ).pipe(ops.take(k)).subscribe(on_next)
    CountingStream.closed.wait(10)
    runner.when_idle(user_id="u", session_id=session.id).run()
    stored = runner.session_service.get_session(
        app_name="streamer", user_id="u", session_id=session.id
    ).run()
    return {
        "received": len(received),
        "produced_at_dispose": at_dispose[0],
        "produced_after_dispose": CountingStream.produced - at_dispose[0],
        "producer_finally_ran": CountingStream.closed.is_set(),
        "stored": [e.error_code or e.author for e in stored.events],
    }


if __name__ == "__main__":
    for key, value in run(int(sys.argv[1]) if len(sys.argv) > 1 else 5).items():
        print(f"{key}: {value}")
