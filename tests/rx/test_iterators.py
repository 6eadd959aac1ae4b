from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import reactivex as rx
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable

from adk_rx.rx import from_async, to_async_iterable, to_iterable

from ._support import WAIT, ThreadProducer, counting, disposal_probe, new_threads

pytestmark = pytest.mark.timeout(20)


def test_to_iterable_yields_every_item_in_order() -> None:
    assert list(to_iterable(rx.from_iterable(range(1000)), 8)) == list(range(1000))


def test_to_iterable_keeps_a_thread_producer_at_most_max_buffer_plus_one_ahead() -> None:
    consumed = 0
    producer = ThreadProducer(2000, consumed=lambda: consumed)
    for item in to_iterable(producer.observable(), max_buffer=8):
        assert item == consumed
        consumed += 1
    assert consumed == 2000
    assert max(producer.lags) <= 9
    producer.join()


def test_to_iterable_pushes_back_on_a_synchronous_source() -> None:
    pulled: list[int] = []
    consumed = 0
    for _ in to_iterable(rx.from_iterable(counting(2000, pulled)), max_buffer=8):
        consumed += 1
        # pulled from the generator, minus the 8 buffered and the one held in on_next,
        # plus the one the generator may have produced but not yet handed over
        assert len(pulled) - consumed <= 8 + 1
    assert consumed == 2000


def test_to_iterable_early_break_disposes_upstream_and_releases_the_producer() -> None:
    producer = ThreadProducer(100_000)
    iterator = to_iterable(producer.observable(), max_buffer=4)
    for item in iterator:
        if item == 10:
            break
    iterator.close()
    # The subscribing thread may still be wiring the chain; the disposal reaches the source
    # as soon as its disposable exists.
    assert producer.disposed.wait(WAIT)
    assert producer.finished.wait(WAIT)
    assert producer.produced <= 10 + 4 + 2
    producer.join()


def test_to_iterable_raises_the_error_after_the_preceding_items() -> None:
    source = rx.concat(rx.of(1, 2), rx.throw(KeyError("gone")))
    received: list[int] = []
    with pytest.raises(KeyError):
        for item in to_iterable(source, 4):
            received.append(item)
    assert received == [1, 2]


def test_to_iterable_subscribes_only_when_iteration_starts() -> None:
    subscriptions: list[int] = []
    source = rx.defer(lambda _: (subscriptions.append(1), rx.of(1))[1])
    iterator = to_iterable(source, 4)
    assert subscriptions == []
    assert list(iterator) == [1]
    assert subscriptions == [1]


def test_to_iterable_leaves_no_thread_behind() -> None:
    baseline = set(threading.enumerate())
    for _ in range(5):
        for item in to_iterable(rx.from_iterable(range(10_000)), 16):
            if item == 100:
                break
    for thread in new_threads(baseline):
        thread.join(WAIT)
    # No thread of its own left (a thread of an earlier test may end meanwhile: a count
    # against the baseline failed when the GC collected an old executor during the loop).
    assert new_threads(baseline) == []


def test_to_async_iterable_keeps_a_thread_producer_bounded_and_lossless() -> None:
    consumed = 0
    producer = ThreadProducer(2000, consumed=lambda: consumed)

    async def main() -> list[int]:
        nonlocal consumed
        received: list[int] = []
        async for item in to_async_iterable(producer.observable(), 8):
            received.append(item)
            consumed += 1
        return received

    assert asyncio.run(main()) == list(range(2000))
    assert max(producer.lags) <= 9
    producer.join()


def test_to_async_iterable_buffers_a_loop_thread_producer_without_deadlock() -> None:
    async def main() -> list[int]:
        return [item async for item in to_async_iterable(rx.from_iterable(range(100)), 4)]

    assert asyncio.run(main()) == list(range(100))


def test_to_async_iterable_reads_a_from_async_source_on_the_same_loop() -> None:
    async def stream() -> AsyncIterator[int]:
        for i in range(50):
            await asyncio.sleep(0)
            yield i

    async def main() -> list[int]:
        source = from_async(stream).pipe(ops.map(lambda x: x * 2))
        return [item async for item in to_async_iterable(source, 4)]

    assert asyncio.run(main()) == [x * 2 for x in range(50)]


def test_to_async_iterable_early_break_disposes_and_cancels_the_async_source() -> None:
    closed = threading.Event()

    async def stream() -> AsyncIterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
                await asyncio.sleep(0)
        finally:
            closed.set()

    async def main() -> None:
        source, disposed = disposal_probe(from_async(stream))
        iterator = to_async_iterable(source, 4)
        async for item in iterator:
            if item == 5:
                break
        await iterator.aclose()  # type: ignore[attr-defined]
        assert disposed.is_set()
        for _ in range(10):  # let the cancelled task run its finally
            if closed.is_set():
                break
            await asyncio.sleep(0)
        assert closed.is_set()

    asyncio.run(main())


def test_to_async_iterable_early_break_releases_a_blocked_thread_producer() -> None:
    producer = ThreadProducer(100_000)

    async def main() -> None:
        async for item in to_async_iterable(producer.observable(), 4):
            if item == 3:
                break

    asyncio.run(main())
    assert producer.disposed.wait(WAIT)
    assert producer.finished.wait(WAIT)
    producer.join()


def test_to_async_iterable_raises_the_error_after_the_preceding_items() -> None:
    async def main() -> list[int]:
        received: list[int] = []
        source = rx.concat(rx.of(1), rx.throw(KeyError("gone")))
        with pytest.raises(KeyError):
            async for item in to_async_iterable(source, 4):
                received.append(item)
        return received

    assert asyncio.run(main()) == [1]


def test_to_iterable_holds_a_producer_that_emits_after_the_consumer_left_until_it_is_disposed() -> (
    None
):
    # The source's subscribe() is still running when the consumer leaves, so its disposable
    # does not exist yet. A producer thread that emits then must not run on unchecked (its
    # items dropped): its on_next returns only once the disposal reached the source.
    left = threading.Event()  # the consumer closed the iterator
    entered = threading.Event()  # the producer called on_next after that
    permits = threading.Semaphore(2)  # items the producer may emit before the consumer left
    disposed = threading.Event()
    returned_disposed: list[bool] = []
    producers: list[threading.Thread] = []

    def subscribe(observer: abc.ObserverBase[int], _: Any = None) -> abc.DisposableBase:
        def produce() -> None:
            for i in range(3):
                permits.acquire()
                if i == 2:
                    entered.set()
                observer.on_next(i)
                if i == 2:
                    returned_disposed.append(disposed.is_set())

        producers.append(threading.Thread(target=produce, daemon=True))
        producers[0].start()
        assert left.wait(WAIT)
        permits.release()  # the producer's third item comes after the consumer left
        assert entered.wait(WAIT)
        return Disposable(disposed.set)  # the disposable exists only now

    iterator = to_iterable(rx.create(subscribe), max_buffer=8)
    assert next(iterator) == 0
    iterator.close()  # type: ignore[attr-defined]
    left.set()
    assert disposed.wait(WAIT)
    producers[0].join(WAIT)
    assert returned_disposed == [True]


def test_to_async_iterable_pauses_a_from_async_producer_on_its_loop_at_max_buffer() -> None:
    produced = 0

    async def stream() -> AsyncIterator[int]:
        nonlocal produced
        for i in range(10_000):
            produced += 1
            yield i
            await asyncio.sleep(0)  # a real stream awaits its socket between items

    async def main() -> int:
        iterator = to_async_iterable(from_async(stream), 4)
        assert await anext(iterator) == 0
        for _ in range(200):  # 200 turns of the loop: a producer not paused makes ~200 items
            await asyncio.sleep(0)
        seen = produced
        await iterator.aclose()  # type: ignore[attr-defined]
        return seen

    seen = asyncio.run(main())
    assert seen <= 1 + 4 + 1
