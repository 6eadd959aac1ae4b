"""from_generator: a generator's yielded Observables in place, those already here at once."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Generator
from typing import Any

import pytest
import reactivex as rx
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx._engine.collected import collected
from adk_rx.rx._engine.generator_stage import from_generator
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import items, just

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_answers_here_are_emitted_at_once_and_an_inner_is_awaited_on_virtual_time() -> None:
    # steps:            a, then inner, then d (with inner's last item)
    # inner:            --b--c|          (relative 10, 20; completes 30)
    # from_generator:   a--b--c-d|       (a at 200; d when inner completed, at 230)
    scheduler = TestScheduler()
    inner = scheduler.create_cold_observable(on_next(10, "b"), on_next(20, "c"), on_completed(30))
    resumed_at: list[int] = []

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        last = yield inner
        resumed_at.append(scheduler.clock)
        yield just(f"d after {last}")

    result = scheduler.start(lambda: from_generator(steps))
    assert result.messages == [
        on_next(200, "a"),
        on_next(210, "b"),
        on_next(220, "c"),
        on_next(230, "d after c"),
        on_completed(230),
    ]
    assert resumed_at == [230]


def test_a_whole_synchronous_run_needs_no_subscription_per_item() -> None:
    def steps() -> Generator[Any, Any, None]:
        for n in range(3):
            yield just(n)
        last = yield items([10, 11])  # completes while subscribing: goes on in this loop
        yield just(last)
        empty_last = yield rx.empty()
        yield just(empty_last)

    got: list[Any] = []
    from_generator(steps).subscribe(got.append, on_completed=lambda: got.append("|"))
    assert got == [0, 1, 2, 10, 11, 11, None, "|"]


def test_an_inner_error_is_raised_at_the_yield_and_the_generator_may_recover() -> None:
    # inner:            --b--#e
    # steps:            catches e, yields "recovered"
    # from_generator:   --b--recovered|
    def steps() -> Generator[Any, Any, None]:
        try:
            yield rx.concat(items(["b"]), rx.throw(ValueError("e")))
        except ValueError as exc:
            yield just(f"recovered from {exc}")

    got: list[Any] = []
    from_generator(steps).subscribe(got.append, on_completed=lambda: got.append("|"))
    assert got == ["b", "recovered from e", "|"]


def test_an_error_the_generator_does_not_catch_ends_the_stream() -> None:
    # inner (later):    --b--#e          (the error arrives after subscribe() returned)
    # from_generator:   a--b--#e
    subject: Subject[str] = Subject()

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        yield subject
        yield just("never")

    got: list[Any] = []
    errors: list[Exception] = []
    from_generator(steps).subscribe(got.append, errors.append)
    subject.on_next("b")
    subject.on_error(RuntimeError("e"))
    assert got == ["a", "b"]
    assert [str(e) for e in errors] == ["e"]


def test_an_exception_in_the_generator_or_its_factory_errors_the_stream() -> None:
    def steps() -> Generator[Any, Any, None]:
        yield just(1)
        raise KeyError("boom")

    errors: list[Exception] = []
    from_generator(steps).subscribe(on_error=errors.append)

    def no_generator() -> Generator[Any, Any, None]:
        raise ValueError("cannot start")

    from_generator(no_generator).subscribe(on_error=errors.append)
    assert [type(e) for e in errors] == [KeyError, ValueError]


def test_an_inner_completing_on_another_thread_resumes_the_generator_there() -> None:
    done = threading.Event()
    threads: list[str] = []

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        yield rx.timer(0.01).pipe(rx.operators.map(lambda _: "b"))
        threads.append(threading.current_thread().name)
        yield just("c")

    got: list[Any] = []
    from_generator(steps).subscribe(got.append, on_completed=done.set)
    assert done.wait(5)
    assert got == ["a", "b", "c"]
    assert threads != [threading.current_thread().name]


def test_a_settled_answer_is_taken_over_emitted_or_collected_in_order() -> None:
    # The driver takes over a settled answer (settle) that goes on later: its items held
    # before, then those that come on another thread, emitted or collected in order; the
    # generator resumes from its end on that thread.
    emitted: Subject[str] = Subject()
    kept: Subject[str] = Subject()
    into: list[str] = []
    resumed: list[Any] = []

    def steps() -> Generator[Any, Any, None]:
        answer = settle(emitted)
        emitted.on_next("a")  # before the driver took over: held, then replayed
        resumed.append((yield answer))
        resumed.append((yield collected(settle(kept), into)))
        resumed.append(threading.current_thread().name)
        yield just(list(into))

    got: list[Any] = []
    done = threading.Event()
    from_generator(steps).subscribe(got.append, got.append, done.set)

    def answer() -> None:
        emitted.on_next("b")
        emitted.on_completed()
        kept.on_next("c")
        kept.on_next("d")
        kept.on_completed()

    answering = threading.Thread(target=answer, name="answering")
    answering.start()
    answering.join()
    assert done.is_set()
    assert got == ["a", "b", ["c", "d"]]
    assert resumed == ["b", None, "answering"]


def test_disposing_from_inside_on_next_stops_the_run_and_closes_the_generator() -> None:
    # The run goes on synchronously once a first inner completed (after subscribe() returned,
    # so the subscriber holds the handle): a dispose from on_next stops it at that item.
    gate: Subject[str] = Subject()
    closed: list[str] = []
    produced: list[int] = []

    def steps() -> Generator[Any, Any, None]:
        try:
            yield gate
            for n in range(100):
                produced.append(n)
                yield just(n)
        finally:
            closed.append("closed")

    got: list[Any] = []
    handle: list[Any] = []

    def on_next(item: Any) -> None:
        got.append(item)
        if item == 2:
            handle[0].dispose()

    handle.append(from_generator(steps).subscribe(on_next))
    gate.on_completed()
    assert got == [0, 1, 2]
    assert produced == [0, 1, 2]
    assert closed == ["closed"]


@pytest.mark.parametrize("settled", [False, True], ids=["subscribed", "settled answer"])
def test_disposing_while_an_inner_runs_disposes_the_inner_and_emits_nothing_more(
    settled: bool,
) -> None:
    subject: Subject[str] = Subject()
    closed: list[str] = []

    def steps() -> Generator[Any, Any, None]:
        try:
            yield just("a")
            yield settle(subject) if settled else subject
            yield just("never")
        finally:
            closed.append("closed")

    got: list[Any] = []
    subscription = from_generator(steps).subscribe(got.append)
    assert subject.observers  # the inner is subscribed
    subscription.dispose()
    assert not subject.observers
    subject.on_next("late")
    assert got == ["a"]
    assert closed == ["closed"]


def test_a_long_synchronous_run_does_not_grow_the_stack() -> None:
    count = sys.getrecursionlimit() * 2

    def steps() -> Generator[Any, Any, None]:
        for n in range(count):
            yield items([n])

    got: list[int] = []
    from_generator(steps).subscribe(got.append)
    assert len(got) == count


def _race_one_dispose(pool: Any, failures: list[BaseException]) -> int:
    """One run whose inners complete on pool threads (each a little blocking work), disposed
    from this thread once its first item arrived; returns how many items it emitted."""
    from adk_rx.rx.bridges import from_blocking

    closed = threading.Event()
    first = threading.Event()
    disposed = threading.Event()
    emitted: list[Any] = []
    after_dispose: list[Any] = []

    def steps() -> Generator[Any, Any, None]:
        try:
            for n in range(20):
                got = yield from_blocking(lambda n=n: time.sleep(0.0002) or n, pool)
                yield just(f"after {got}")
        finally:
            closed.set()

    def on_next(item: Any) -> None:
        emitted.append(item)
        if disposed.is_set():
            after_dispose.append(item)
        first.set()

    handle = from_generator(steps).subscribe(on_next, failures.append)
    assert first.wait(5)
    handle.dispose()  # while the generator goes on on the pool's threads
    disposed.set()
    assert closed.wait(5)  # the generator's finally ran, whichever thread closed it
    assert len(after_dispose) <= 1  # at most the item already on its way
    return len(emitted)


def test_a_dispose_racing_inners_that_complete_on_other_threads_stops_cleanly() -> None:
    from reactivex.scheduler import ThreadPoolScheduler

    pool = ThreadPoolScheduler(4)
    failures: list[BaseException] = []
    previous_hook = threading.excepthook
    threading.excepthook = lambda args: failures.append(args.exc_value)  # type: ignore[assignment]
    try:
        emitted = [_race_one_dispose(pool, failures) for _ in range(200)]
    finally:
        threading.excepthook = previous_hook
        pool.executor.shutdown(wait=True)
    assert failures == []
    assert sum(n < 40 for n in emitted) > 100  # most runs were stopped part-way
