"""Suite-wide settings: no test may reach a hosted model, and every test starts from the same
process-wide state and leaves it as it found it.

Each test gets a fresh (cold) I/O pool. A pool that an earlier test left warm (idle worker
threads waiting) hands blocking work over differently from a new one, which must start a
thread for it; a race that shows only with a cold pool, as when the test runs alone, was once
hidden in suite order that way (a LoopAgent's exit after a tool that ran on the pool).

After each test the state a test could leave behind is compared with what it was before:
RxPY's trampoline on this thread, the real-model switch, the shared schedulers, the default
model registry, adk_rx's tasks on a loop and the SIGINT handler. The comparison costs a few
attribute reads. (The environment and the root logger are left out: libraries the tests import
set variables and handlers of their own on first import.)
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.scheduler.currentthreadscheduler import CurrentThreadSchedulerSingleton

from adk_rx.models import safety
from adk_rx.models.registry import LlmRegistry
from adk_rx.rx import async_source, schedulers

safety.allow_real_model_calls(False)

_TASKS_GRACE = 2.0  # seconds a task that finishes as a run ends may take to leave _pumps


def _state() -> dict[str, Any]:
    """What a test could change for the tests after it, cheap enough to read twice a test."""
    trampoline = CurrentThreadSchedulerSingleton._local.tramp
    registry = LlmRegistry._default
    return {
        "RxPY trampoline of this thread (idle, queued)": (
            trampoline.idle(),
            len(trampoline._queue),
        ),
        "real-model switch": safety._allowed,
        "I/O scheduler": schedulers._io,
        "timer scheduler": schedulers._timer or "unset",
        "background loop": schedulers._loop or "unset",
        "default LlmRegistry": tuple(registry.patterns()) if registry else "unset",
        "SIGINT handler": signal.getsignal(signal.SIGINT),
    }


def _tasks_left() -> int:
    """adk_rx tasks still running on a loop; one that is finishing gets a moment to end."""
    deadline = time.monotonic() + _TASKS_GRACE
    while async_source._pumps and time.monotonic() < deadline:
        time.sleep(0.01)
    return len(async_source._pumps)


def _changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changed: list[str] = []
    for name, was in before.items():
        now = after[name]
        if now == was or was == "unset":  # "unset": made on first use, then kept for the process
            continue
        changed.append(f"{name}: {was!r} -> {now!r}")
    return changed


@pytest.fixture(autouse=True)
def _cold_io_pool_and_no_state_left_behind() -> Iterator[None]:
    shared = schedulers.io_scheduler()  # what module and session fixtures use between tests
    pool = ThreadPoolScheduler(max_workers=schedulers._io_workers())
    schedulers.set_io_scheduler(pool)
    before = _state()
    tasks_before = len(async_source._pumps)
    yield
    after = _state()
    schedulers.set_io_scheduler(shared)
    pool.executor.shutdown(wait=False)  # idle workers end now, busy ones when done
    changed = _changes(before, after)
    if _tasks_left() > tasks_before:
        changed.append("adk_rx tasks still running on a loop after the test")
    if changed:
        pytest.fail("the test left process-wide state behind:\n" + "\n".join(changed))
