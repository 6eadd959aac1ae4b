from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from reactivex.abc import DisposableBase
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx.rx import io_scheduler, runtime_loop, set_io_scheduler, timer_scheduler
from adk_rx.rx import schedulers as module
from adk_rx.rx.schedulers import schedule_now

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def fresh_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forgets the shared pool for one test and restores it afterwards."""
    previous = io_scheduler()
    monkeypatch.setattr(module, "_io", None)
    yield
    set_io_scheduler(previous)


def test_io_scheduler_is_one_shared_pool_even_under_concurrent_first_use(fresh_io: None) -> None:
    barrier = threading.Barrier(8)
    seen: list[ThreadPoolScheduler] = []

    def first_use() -> None:
        barrier.wait(WAIT)
        seen.append(io_scheduler())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert len(seen) == 8
    assert all(s is seen[0] for s in seen)


def test_io_scheduler_size_comes_from_the_environment(
    fresh_io: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADK_RX_IO_WORKERS", "3")
    assert io_scheduler().executor._max_workers == 3  # pyright: ignore[reportPrivateUsage]


def test_io_scheduler_defaults_to_32_workers(
    fresh_io: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ADK_RX_IO_WORKERS", raising=False)
    assert io_scheduler().executor._max_workers == 32  # pyright: ignore[reportPrivateUsage]


def test_set_io_scheduler_replaces_the_shared_pool(fresh_io: None) -> None:
    mine = ThreadPoolScheduler(2)
    set_io_scheduler(mine)
    assert io_scheduler() is mine
    mine.executor.shutdown()


def test_timer_scheduler_runs_every_timer_on_one_thread() -> None:
    scheduler = timer_scheduler()
    assert timer_scheduler() is scheduler
    threads: list[int] = []
    all_fired = threading.Event()

    def fire(*_: object) -> None:
        threads.append(threading.get_ident())
        if len(threads) == 50:
            all_fired.set()

    for i in range(50):
        scheduler.schedule_relative(0.001 * (i % 5), fire)
    assert all_fired.wait(WAIT)
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()


def test_timer_scheduler_survives_an_action_that_raises() -> None:
    scheduler = timer_scheduler()
    ran = threading.Event()
    scheduler.schedule(lambda *_: 1 / 0)
    scheduler.schedule(lambda *_: ran.set())
    assert ran.wait(WAIT)


_where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")


def test_timer_actions_run_in_the_context_they_were_scheduled_from() -> None:
    seen: list[str] = []
    fired = threading.Event()

    def read(*_: object) -> None:
        seen.append(_where.get())
        fired.set()

    token = _where.set("scheduler of the timer")
    try:
        timer_scheduler().schedule_relative(0.001, read)
    finally:
        _where.reset(token)
    assert fired.wait(WAIT)
    assert seen == ["scheduler of the timer"]


def test_pool_work_runs_in_the_context_it_was_scheduled_from() -> None:
    seen: list[str] = []
    done = threading.Event()

    def read(*_: object) -> None:
        seen.append(_where.get())
        _where.set("changed by the worker")  # stays in the worker's copy
        done.set()

    token = _where.set("caller")
    try:
        schedule_now(io_scheduler(), read)
        assert done.wait(WAIT)
        assert _where.get() == "caller"
    finally:
        _where.reset(token)
    assert seen == ["caller"]


def test_runtime_loop_is_the_running_loop_of_asyncio_code() -> None:
    async def main() -> bool:
        return runtime_loop() is asyncio.get_running_loop()

    assert asyncio.run(main())


def test_runtime_loop_outside_asyncio_is_one_background_loop_for_every_thread() -> None:
    loops: list[asyncio.AbstractEventLoop] = []
    thread = threading.Thread(target=lambda: loops.append(runtime_loop()))
    thread.start()
    thread.join(WAIT)
    loop = runtime_loop()
    assert loops == [loop]
    assert loop.is_running()
    ran_on: list[bool] = []
    ran = threading.Event()
    loop.call_soon_threadsafe(lambda: (ran_on.append(runtime_loop() is loop), ran.set()))
    assert ran.wait(WAIT)
    assert ran_on == [True]


class _Referent:
    """Something a timer's action holds."""


def test_a_cancelled_timer_lets_go_of_its_action_at_once() -> None:
    scheduler = timer_scheduler()
    held: list[weakref.ref[_Referent]] = []
    timers: list[DisposableBase] = []

    def schedule_holding(referent: _Referent) -> None:
        held.append(weakref.ref(referent))
        timers.append(
            scheduler.schedule_relative(300.0, lambda *_: held.append(weakref.ref(referent)))
        )

    for _ in range(20):
        schedule_holding(_Referent())

    for timer in timers:
        timer.dispose()
    gc.collect()

    assert [ref for ref in held if ref() is not None] == []


def test_cancelled_timers_leave_the_queue_before_their_due_time() -> None:
    scheduler = module._SurvivingEventLoopScheduler()  # pyright: ignore[reportPrivateUsage]
    keep = scheduler.schedule_relative(300.0, lambda *_: None)
    for _ in range(1000):
        scheduler.schedule_relative(300.0, lambda *_: None).dispose()

    queued = len(scheduler._queue)  # pyright: ignore[reportPrivateUsage]

    assert queued <= 3
    keep.dispose()
    scheduler.dispose()
