"""StartAware: a source learns whether its subscriber can stop it before subscribe() returns."""

from __future__ import annotations

from typing import Any

import reactivex as rx
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import BooleanDisposable

from adk_rx.rx._engine.top_level import Hand, StartAware

MaybeHand = Hand | None


def _counting(starts: list[bool], produced: list[int], count: int = 5) -> StartAware[int]:
    """A synchronous source of ``count`` items that stops once disposed."""

    def start(
        observer: abc.ObserverBase[int], queued: bool, hand: Hand | None
    ) -> abc.DisposableBase:
        starts.append(queued)
        stop = BooleanDisposable()

        def run(*_: Any) -> None:
            for n in range(count):
                if stop.is_disposed:
                    return
                produced.append(n)
                observer.on_next(n)
            observer.on_completed()

        if queued:
            rx.scheduler.CurrentThreadScheduler.singleton().schedule(run)
        else:
            run()
        return stop

    return StartAware(start)


def test_at_the_top_of_a_thread_the_source_starts_without_queueing_again() -> None:
    starts: list[bool] = []
    produced: list[int] = []
    got: list[Any] = []
    _counting(starts, produced).subscribe(got.append, on_completed=lambda: got.append("|"))
    assert starts == [False]
    assert got == [0, 1, 2, 3, 4, "|"]


def test_inside_an_operator_chain_it_queues_so_take_stops_it_at_once() -> None:
    # take(2) disposes from inside the second on_next: the source must see it before item 3.
    starts: list[bool] = []
    produced: list[int] = []
    got: list[Any] = []
    _counting(starts, produced).pipe(ops.take(2)).subscribe(
        got.append, on_completed=lambda: got.append("|")
    )
    assert starts == [True]
    assert got == [0, 1, "|"]
    assert produced == [0, 1]


def test_an_observer_object_is_accepted_and_a_failing_start_errors_the_stream() -> None:
    def fail(
        observer: abc.ObserverBase[int], queued: bool, hand: Hand | None
    ) -> abc.DisposableBase:
        raise ValueError("cannot start")

    errors: list[Exception] = []
    StartAware(fail).subscribe(rx.Observer(on_error=errors.append))  # type: ignore[attr-defined]
    assert [str(e) for e in errors] == ["cannot start"]


def test_at_the_top_the_subscriber_is_called_directly_while_the_trampoline_is_held() -> None:
    # No auto-detach observer and nothing scheduled: start() gets the subscriber's own
    # observer, the thread's trampoline is held (not run) while it runs, and a stock source
    # subscribed inside queues behind the run, as under stock subscribe(), then runs before
    # subscribe() returns.
    from reactivex.scheduler import CurrentThreadScheduler

    trampoline = CurrentThreadScheduler.singleton().get_trampoline()
    seen: list[Any] = []
    got: list[Any] = []

    def start(
        observer: abc.ObserverBase[int], queued: bool, hand: Hand | None
    ) -> abc.DisposableBase:
        seen.extend([observer, queued, trampoline.idle()])
        rx.of(1, 2).subscribe(observer.on_next)
        observer.on_next(0)  # before the stock source's items: they were queued
        return BooleanDisposable()

    subscriber: Any = rx.Observer(got.append)  # type: ignore[attr-defined]
    handle = StartAware(start).subscribe(subscriber)
    assert seen == [subscriber, False, False]
    assert got == [0, 1, 2]
    assert isinstance(handle, BooleanDisposable)  # the start function's own handle
    assert trampoline.idle()  # let go once the run returned
