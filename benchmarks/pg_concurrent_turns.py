"""Concurrent turns on PostgreSQL: how many connections they hold, and how long they take.

RUNS concurrent runs on as many sessions, through one Runner and one SqlSessionService. Each
holds its session's turn lock while its model waits until every run has reached the model,
so all of them hold a lock at the same time; then all reply. Prints, per repetition, the
connections the process had open at that moment (``pg_stat_activity``) and the time from
the first subscription to the last completion, then the medians.

Needs a PostgreSQL server: ``ADK_RX_BENCH_POSTGRES_URL`` (or ``ADK_RX_TEST_POSTGRES_URL``),
e.g. ``postgresql://postgres@127.0.0.1:5432/test``; the script works in a schema of its own
and drops it. Run from the repository root:
``PYTHONPATH=. python benchmarks/pg_concurrent_turns.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import threading
import time
import uuid
from typing import Any

import sqlalchemy as sa
from google.genai import types
from reactivex import Observable

from adk_rx import BaseLlm, LlmAgent, Runner, SqlSessionService
from adk_rx.models import LlmResponse
from adk_rx.rx import from_async, runtime_loop
from adk_rx.sessions.sql_engine import normalize_url

RUNS = 150
REPEAT = 3


class Gathering(BaseLlm):
    """Holds every call until ``expected`` calls wait at once, then lets them all reply."""

    def __init__(self, expected: int) -> None:
        super().__init__(model="gathering")
        self.expected = expected
        self.arrived = 0
        self.all_in = threading.Event()
        self.release = asyncio.Event()

    def generate_content(self, llm_request: Any, stream: bool = False) -> Observable[LlmResponse]:
        async def reply() -> LlmResponse:
            self.arrived += 1
            if self.arrived == self.expected:
                self.all_in.set()
            await self.release.wait()
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))

        return from_async(reply)


def connections(engine: sa.Engine, name: str) -> int:
    with engine.connect() as conn:
        query = sa.text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :n")
        return int(conn.execute(query, {"n": name}).scalar_one())


def one_round(admin: sa.Engine, url: sa.URL) -> tuple[int, float]:
    name = f"adk_rx_bench_{uuid.uuid4().hex[:8]}"
    named = url.update_query_dict({"application_name": name}).render_as_string(False)
    svc = SqlSessionService(named)
    model = Gathering(RUNS)
    runner = Runner(app_name="bench", agent=LlmAgent(name="bot", model=model), session_service=svc)
    sids = [svc.create_session(app_name="bench", user_id="u").run().id for _ in range(RUNS)]
    finished = threading.Semaphore(0)
    errors: list[Exception] = []

    def fail(error: Exception) -> None:
        errors.append(error)
        finished.release()

    start = time.perf_counter()
    for sid in sids:
        runner.run_async(user_id="u", session_id=sid, new_message="hi").subscribe(
            on_error=fail, on_completed=finished.release
        )
    if not model.all_in.wait(120):
        sys.exit(f"only {model.arrived} of {RUNS} runs reached the model; errors: {errors[:3]}")
    held = connections(admin, name)
    runtime_loop().call_soon_threadsafe(model.release.set)
    for _ in range(RUNS):
        finished.acquire()
    elapsed = time.perf_counter() - start
    svc.close()
    if errors:
        sys.exit(f"{len(errors)} runs failed, e.g. {errors[0]!r}")
    return held, elapsed


def main() -> None:
    raw = os.environ.get("ADK_RX_BENCH_POSTGRES_URL") or os.environ.get("ADK_RX_TEST_POSTGRES_URL")
    if not raw:
        sys.exit("set ADK_RX_BENCH_POSTGRES_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)")
    server = normalize_url(raw)
    admin = sa.create_engine(server, poolclass=sa.pool.NullPool)
    schema = f"adk_rx_bench_{uuid.uuid4().hex[:8]}"
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    url = server.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        rounds = [one_round(admin, url) for _ in range(REPEAT)]
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()
    for held, elapsed in rounds:
        print(f"{RUNS} concurrent turns: {held} connections held, {elapsed:.2f} s")
    held = statistics.median(h for h, _ in rounds)
    elapsed = statistics.median(e for _, e in rounds)
    print(f"median: {held:.0f} connections, {elapsed:.2f} s, {RUNS / elapsed:.0f} turns/s")


if __name__ == "__main__":
    main()
