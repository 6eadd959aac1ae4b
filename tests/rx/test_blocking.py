"""Blocking: a blocking call whose mapping, recovery and items are made by its own job, with
the outcome of the layers they replace (first_or_recover, each_of)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import reactivex as rx
from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

from adk_rx.rx import from_blocking
from adk_rx.rx._engine.blocking import Blocking
from adk_rx.rx._engine.collected import each_of
from adk_rx.rx._engine.first_or_recover import first_or_recover
from adk_rx.rx._engine.sync import just

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def one_worker() -> Iterator[ThreadPoolScheduler]:
    scheduler = ThreadPoolScheduler(1)
    yield scheduler
    scheduler.executor.shutdown(wait=True)


def _outcome(source: Observable[Any]) -> list[object]:
    """What ``source`` delivers, waited for: its items, then "done" or the error's text."""
    got: list[object] = []
    ended = threading.Event()

    def failed(exc: Exception) -> None:
        got.append(f"error {exc}")
        ended.set()

    def completed() -> None:
        got.append("done")
        ended.set()

    source.subscribe(got.append, failed, completed)
    assert ended.wait(WAIT)
    return got


def _raise(exc: Exception) -> Callable[..., Any]:
    def fail(*_: Any) -> Any:
        raise exc

    return fail


def _recover(exc: Exception) -> Observable[str]:
    return just(f"recovered {exc}")


def _pair(value: Any) -> list[str]:
    return [f"{value}-1", f"{value}-2"]


# (fn, mapper, recover, each): each case run fused and through the generic layers
CASES: list[tuple[Callable[[], Any], Any, Any, Any]] = [
    (lambda: 2, lambda v: v * 10, _recover, None),
    (_raise(KeyError("call")), str, _recover, None),
    (lambda: 2, _raise(KeyError("map")), _recover, None),
    (_raise(KeyError("call")), str, _raise(ValueError("recovery")), None),
    (_raise(KeyError("call")), str, rx.throw, None),
    (lambda: 2, str, _recover, _pair),
    (_raise(KeyError("call")), str, _recover, _pair),
    (lambda: 2, str, _recover, _raise(ValueError("each"))),
    (lambda: 2, None, None, _pair),
    (_raise(KeyError("call")), None, None, _pair),
]


@pytest.mark.parametrize(("fn", "mapper", "recover", "each"), CASES)
def test_a_fused_call_has_the_outcome_of_the_layers_it_replaces(
    fn: Callable[[], Any], mapper: Any, recover: Any, each: Any
) -> None:
    fused: Observable[Any] = Blocking(fn)
    layered: Observable[Any] = from_blocking(fn)
    if mapper is not None:
        fused = Blocking(fn).first_or_recover(mapper, recover)
        layered = first_or_recover(lambda: from_blocking(fn), mapper, recover)
    if each is not None:
        assert isinstance(fused, Blocking)
        fused = fused.each_of(each)
        layered = each_of(layered, each)
    assert type(fused) is Blocking  # no layer of its own
    assert _outcome(fused) == _outcome(layered)


def test_a_second_mapping_or_second_items_take_a_layer_of_their_own() -> None:
    mapped = Blocking(lambda: 2).first_or_recover(str, _recover)
    assert isinstance(mapped, Blocking)
    twice = mapped.first_or_recover(lambda v: v + "!", _recover)
    assert type(twice) is not Blocking
    assert _outcome(twice) == ["2!", "done"]
    items = Blocking(lambda: 2).each_of(_pair)
    assert isinstance(items, Blocking)
    assert _outcome(items.each_of(_pair)) == ["2-1-1", "2-1-2", "2-2-1", "2-2-2", "done"]


def test_the_mapping_and_the_items_are_made_on_the_worker(one_worker: ThreadPoolScheduler) -> None:
    threads: list[int] = []

    def mapper(value: Any) -> Any:
        threads.append(threading.get_ident())
        return value

    def each(value: Any) -> list[Any]:
        threads.append(threading.get_ident())
        return [value]

    fused = Blocking(lambda: 1, one_worker).first_or_recover(mapper, _recover)
    assert isinstance(fused, Blocking)
    assert _outcome(fused.each_of(each)) == [1, "done"]
    assert len(threads) == 2
    assert threading.get_ident() not in threads


def test_disposed_while_it_runs_nothing_follows(one_worker: ThreadPoolScheduler) -> None:
    running, release = threading.Event(), threading.Event()
    later: list[object] = []

    def call() -> int:
        running.set()
        release.wait(WAIT)
        return 1

    fused = Blocking(call, one_worker).first_or_recover(later.append, _recover)
    assert isinstance(fused, Blocking)
    subscription = fused.each_of(lambda v: [later.append(v)]).subscribe(later.append, later.append)
    assert running.wait(WAIT)
    subscription.dispose()
    release.set()
    one_worker.executor.submit(lambda: None).result(WAIT)  # the job is over
    assert later == []


def test_disposing_during_a_recovery_disposes_it(one_worker: ThreadPoolScheduler) -> None:
    fallback: Subject[str] = Subject()
    subscribed = threading.Event()

    def recover(_: Exception) -> Observable[str]:
        def subscribe(observer: abc.ObserverBase[str], _: Any = None) -> abc.DisposableBase:
            inner = fallback.subscribe(observer)
            subscribed.set()
            return inner

        return rx.create(subscribe)

    got: list[object] = []
    fused = Blocking(_raise(KeyError("call")), one_worker).first_or_recover(str, recover)
    subscription = fused.subscribe(got.append, got.append, lambda: got.append("done"))
    assert subscribed.wait(WAIT)
    subscription.dispose()
    assert not fallback.observers
    fallback.on_next("late")
    assert got == []


class _CountingScheduler(TestScheduler):
    """A virtual-time scheduler that counts the cancels of the jobs scheduled on it."""

    def __init__(self) -> None:
        super().__init__()
        self.cancels = 0

    def schedule(self, action: Any, state: Any = None) -> abc.DisposableBase:
        job = super().schedule(action, state)

        def cancel() -> None:
            self.cancels += 1
            job.dispose()

        return Disposable(cancel)


def test_a_job_that_ran_is_not_cancelled_by_the_dispose_after_its_end() -> None:
    scheduler = _CountingScheduler()
    got: list[object] = []
    from_blocking(lambda: 1, scheduler).subscribe(
        got.append, on_completed=lambda: got.append("done")
    )
    scheduler.advance_by(1)
    assert got == [1, "done"]
    assert scheduler.cancels == 0
    from_blocking(lambda: got.append("never"), scheduler).subscribe().dispose()
    scheduler.advance_by(1)
    assert scheduler.cancels == 1
    assert got == [1, "done"]
