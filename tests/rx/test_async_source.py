from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import pytest
from reactivex import operators as ops

from adk_rx.rx import from_async, runtime_loop
from adk_rx.rx._engine.settle import settle

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)


def test_a_coroutine_emits_its_result_including_none() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def nothing() -> None:
        await asyncio.sleep(0)

    assert from_async(answer).pipe(ops.to_list()).run() == [42]
    assert from_async(nothing).pipe(ops.to_list()).run() == [None]


def test_an_async_generator_emits_its_items() -> None:
    async def count() -> AsyncIterator[int]:
        for i in range(5):
            await asyncio.sleep(0)
            yield i

    assert from_async(count).pipe(ops.to_list()).run() == [0, 1, 2, 3, 4]


def test_the_factory_is_called_once_per_subscription_and_not_before() -> None:
    calls: list[int] = []

    async def work() -> int:
        calls.append(1)
        return len(calls)

    source = from_async(work)
    assert calls == []
    assert source.run() == 1
    assert source.run() == 2


def test_an_exception_becomes_on_error() -> None:
    async def fail() -> int:
        raise LookupError("nope")

    with pytest.raises(LookupError):
        from_async(fail).run()


def test_a_subscription_from_asyncio_code_runs_on_the_callers_loop() -> None:
    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert runtime_loop() is loop
        assert await from_async(where) is loop

    asyncio.run(main())


def test_dispose_from_a_foreign_thread_cancels_within_100_ms_and_runs_finally() -> None:
    first, closed = threading.Event(), threading.Event()
    closed_at: list[float] = []

    async def stream() -> AsyncIterator[int]:
        try:
            yield 1
            await asyncio.sleep(3600)
            yield 2
        finally:
            closed_at.append(time.perf_counter())
            closed.set()

    subscription = from_async(stream).subscribe(lambda _: first.set())
    assert first.wait(WAIT)
    disposed_at = time.perf_counter()
    subscription.dispose()
    assert closed.wait(WAIT)
    assert closed_at[0] - disposed_at < 0.1


def test_an_async_generator_disposed_after_k_items_produces_at_most_one_more() -> None:
    produced: list[int] = []
    closed, reached, disposed = threading.Event(), threading.Event(), threading.Event()
    k = 10

    async def stream() -> AsyncIterator[int]:
        try:
            for i in range(10_000):
                produced.append(i)
                yield i
                await asyncio.sleep(0)
        finally:
            closed.set()

    def on_next(item: int) -> None:
        if item == k - 1:
            reached.set()
            disposed.wait(WAIT)  # hold the loop until the foreign dispose is done

    subscription = from_async(stream).subscribe(on_next)
    assert reached.wait(WAIT)
    subscription.dispose()  # from this (foreign) thread
    disposed.set()
    assert closed.wait(WAIT)
    assert len(produced) <= k + 1


def test_take_inside_on_next_stops_the_generator_before_the_next_item() -> None:
    produced: list[int] = []
    closed = threading.Event()

    async def stream() -> AsyncIterator[int]:
        try:
            for i in range(10_000):
                produced.append(i)
                yield i
        finally:
            closed.set()

    async def main() -> list[int]:
        # Subscribed on the loop, so the chain is wired before the task takes its first step.
        return await from_async(stream).pipe(ops.take(3), ops.to_list())

    assert asyncio.run(main()) == [0, 1, 2]
    assert closed.wait(WAIT)
    assert produced == [0, 1, 2]


def test_dispose_before_the_task_starts_never_calls_the_factory() -> None:
    calls: list[int] = []

    async def work() -> None:
        calls.append(1)

    async def main() -> None:
        from_async(work).subscribe().dispose()  # on the loop: the task has not run yet
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert calls == []


def test_the_driver_passes_it_on_without_subscribing_it_first() -> None:
    # It answers later by construction: settle() must not hold it behind a layer of its own.
    async def answer() -> int:
        return 1

    source = from_async(answer)
    assert settle(source) is source
