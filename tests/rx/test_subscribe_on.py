from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.scheduler import EventLoopScheduler

from adk_rx.rx import subscribe_on_eager

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)


def probe() -> tuple[rx.Observable[int], threading.Event, list[int]]:
    """A source that records the subscribing thread and whether it was disposed."""
    disposed = threading.Event()
    subscribed_on: list[int] = []

    def subscribe(observer: abc.ObserverBase[int], _: Any = None) -> abc.DisposableBase:
        subscribed_on.append(threading.get_ident())
        return Disposable(disposed.set)

    return rx.create(subscribe), disposed, subscribed_on


def test_subscribes_on_the_scheduler_thread(consumer_scheduler: EventLoopScheduler) -> None:
    result = rx.from_iterable(range(5)).pipe(
        subscribe_on_eager(consumer_scheduler), ops.map(lambda x: threading.get_ident())
    )
    threads = result.pipe(ops.to_list()).run()
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()


def test_dispose_reaches_upstream_synchronously_while_the_worker_is_busy(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    source, disposed, subscribed_on = probe()
    subscribed = threading.Event()
    subscription = source.pipe(subscribe_on_eager(consumer_scheduler)).subscribe()
    consumer_scheduler.schedule(lambda *_: subscribed.set())
    assert subscribed.wait(WAIT)
    assert len(subscribed_on) == 1
    busy, release = threading.Event(), threading.Event()
    consumer_scheduler.schedule(lambda *_: (busy.set(), release.wait(WAIT)))
    assert busy.wait(WAIT)
    subscription.dispose()
    assert disposed.is_set()  # already, although the worker is still busy
    release.set()


def test_dispose_before_the_subscription_ran_means_it_never_runs(
    consumer_scheduler: EventLoopScheduler,
) -> None:
    source, _, subscribed_on = probe()
    busy, release = threading.Event(), threading.Event()
    consumer_scheduler.schedule(lambda *_: (busy.set(), release.wait(WAIT)))
    assert busy.wait(WAIT)
    source.pipe(subscribe_on_eager(consumer_scheduler)).subscribe().dispose()
    release.set()
    flushed = threading.Event()
    consumer_scheduler.schedule(lambda *_: flushed.set())
    assert flushed.wait(WAIT)
    assert subscribed_on == []
