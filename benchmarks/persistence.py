"""What persistence costs: turns through a Runner and raw appends, per store.

    python benchmarks/persistence.py

Prints a table of medians (of 5 rounds) for the in-memory store (the reference), SQLite (a
temporary file) and PostgreSQL (when ``ADK_RX_TEST_POSTGRES_URL`` is set; the benchmark works
in a schema of its own and drops it afterwards):

  * ms per simple turn: one user message, one scripted model reply, both persisted, through
    ``Runner.run_async``; sessions hold up to 10 turns;
  * ms per read of the 10 newest events of a 2,000-event session;
  * appends per second from 20 threads appending to one session.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from google.genai import types
from reactivex import operators as ops
from report import progress

from adk_rx import GetSessionConfig, InMemorySessionService, LlmAgent, LlmResponse, Runner
from adk_rx.events import Event
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.sessions.sql_engine import normalize_url
from adk_rx.testing import ScriptedLlm

ROUNDS = 5
APP = "bench"
TURNS_PER_SESSION = 10
SESSIONS_PER_ROUND = 20
THREADS, APPENDS_PER_THREAD = 20, 100


def _message(i: int) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=f"hello {i}")])


def turn_ms(service: BaseSessionService) -> float:
    """Median ms of one turn, over sessions of up to TURNS_PER_SESSION turns."""
    turns = SESSIONS_PER_ROUND * TURNS_PER_SESSION
    llm = ScriptedLlm([LlmResponse.text(f"reply {i}") for i in range(turns)])
    runner = Runner(app_name=APP, agent=LlmAgent(name="bot", model=llm), session_service=service)
    user = uuid.uuid4().hex
    sessions = [
        service.create_session(app_name=APP, user_id=user).run().id
        for _ in range(SESSIONS_PER_ROUND)
    ]
    messages = [_message(i) for i in range(TURNS_PER_SESSION)]
    times: list[float] = []
    for i in range(TURNS_PER_SESSION):
        for sid in sessions:
            start = time.perf_counter()
            runner.run_async(user_id=user, session_id=sid, new_message=messages[i]).pipe(
                ops.to_list()
            ).run()
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def recent_read_ms(service: BaseSessionService, history: int = 2000, reads: int = 200) -> float:
    """Median ms of get_session(num_recent_events=10) on a session of ``history`` events."""
    session = service.create_session(app_name=APP, user_id=uuid.uuid4().hex).run()
    for i in range(history):
        service.append_event(session, Event(author="user", content=_message(i))).run()
    config = GetSessionConfig(num_recent_events=10)
    times: list[float] = []
    for _ in range(reads):
        start = time.perf_counter()
        service.get_session(
            app_name=APP, user_id=session.user_id, session_id=session.id, config=config
        ).run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def appends_per_second(service: BaseSessionService) -> float:
    """Appends per second, THREADS threads appending to one session at once."""
    session = service.create_session(app_name=APP, user_id=uuid.uuid4().hex).run()
    start_line = threading.Barrier(THREADS + 1)

    def writer() -> None:
        view = service.get_session(
            app_name=APP, user_id=session.user_id, session_id=session.id
        ).run()
        start_line.wait()
        for i in range(APPENDS_PER_THREAD):
            service.append_event(view, Event(author="user", content=_message(i))).run()

    threads = [threading.Thread(target=writer) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    start_line.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return THREADS * APPENDS_PER_THREAD / (time.perf_counter() - start)


@contextmanager
def _postgres_schema(url: str) -> Iterator[str]:
    base = normalize_url(url)
    name = f"adk_rx_bench_{uuid.uuid4().hex[:8]}"
    engine = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    try:
        scoped = base.update_query_dict({"options": f"-csearch_path={name}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{name}" CASCADE')
        engine.dispose()


def _measure(name: str, make: Callable[[], BaseSessionService]) -> tuple[str, float, float, float]:
    service = make()
    try:
        turn_ms(service)  # warm up: tables, pools, caches
        turns = statistics.median(turn_ms(service) for _ in range(ROUNDS))
        reads = statistics.median(recent_read_ms(service) for _ in range(ROUNDS))
        appends = statistics.median(appends_per_second(service) for _ in range(ROUNDS))
    finally:
        service.close()
    return name, turns, reads, appends


def main() -> None:
    progress("in-memory store")
    rows = [_measure("in-memory (reference)", InMemorySessionService)]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        progress("SQLite store")
        rows.append(_measure("SQLite (file, WAL)", lambda: SqlSessionService(url)))
    postgres = os.environ.get("ADK_RX_TEST_POSTGRES_URL", "").strip()
    if postgres:
        with _postgres_schema(postgres) as url:
            progress("PostgreSQL store")
            rows.append(_measure("PostgreSQL", lambda: SqlSessionService(url)))
    else:
        print("PostgreSQL skipped: set ADK_RX_TEST_POSTGRES_URL to include it", file=sys.stderr)
    print(f"medians of {ROUNDS} rounds; {os.cpu_count()} CPUs")
    print(f"{'store':<24}{'ms/turn':>10}{'ms/recent read':>16}{'appends/s (20 thr)':>20}")
    for name, turns, reads, appends in rows:
        print(f"{name:<24}{turns:>10.3f}{reads:>16.3f}{appends:>20,.0f}")


if __name__ == "__main__":
    main()
