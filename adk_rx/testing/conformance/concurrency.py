"""Checks of appends from many threads at once."""

from __future__ import annotations

import threading

from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import GetSessionConfig
from adk_rx.testing.conformance.support import (
    check,
    delta,
    event,
    expect,
    get,
    value,
)


@check
def concurrent_appends_from_threads_are_all_stored_in_order(
    svc: BaseSessionService, app: str
) -> None:
    threads_n, per_thread = 20, 50
    created = value(svc.create_session(app_name=app, user_id="u"))
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

    def writer(t: int) -> None:
        try:
            view = get(svc, created)  # each writer has its own, soon stale, view
            start.wait()
            for i in range(per_thread):
                actions = delta(**{f"user:last{t}": i, f"own{t}": i})
                value(svc.append_event(view, event(f"{t}:{i}", author=f"w{t}", actions=actions)))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads_n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    expect(errors == [], f"appends failed: {errors[:3]!r}")
    got = get(svc, created)
    expect(len(got.events) == threads_n * per_thread, f"stored {len(got.events)} events")
    expect(len({e.id for e in got.events}) == len(got.events), "an event was stored twice")
    for t in range(threads_n):
        mine = [int(e.text().split(":")[1]) for e in got.events if e.author == f"w{t}"]
        expect(mine == list(range(per_thread)), f"writer {t} order: {mine[:10]}...")
        expect(got.state.get(f"user:last{t}") == per_thread - 1, f"user:last{t} lost")
        expect(got.state.get(f"own{t}") == per_thread - 1, f"own{t} lost")
    recent = get(svc, created, GetSessionConfig(num_recent_events=10)).events
    expect([e.id for e in recent] == [e.id for e in got.events[-10:]], "recent != tail")
