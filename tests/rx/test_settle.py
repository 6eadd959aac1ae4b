"""settle: a source that answers while subscribed is a value already here; others go on."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import reactivex as rx
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import is_sync


def _create_now(*values: int) -> rx.Observable[int]:
    def subscribe(observer: Any, _: Any = None) -> Disposable:
        for value in values:
            observer.on_next(value)
        observer.on_completed()
        return Disposable()

    return rx.create(subscribe)


SYNC_SOURCES = {
    "just": lambda: rx.just(1),
    "of": lambda: rx.of(1, 2, 3),
    "create": lambda: _create_now(1, 2),
    "defer of": lambda: rx.defer(lambda _: rx.of(4, 5)),
    "mapped": lambda: rx.of(1, 2).pipe(ops.map(lambda x: x * 10)),
}


@pytest.mark.parametrize("name", sorted(SYNC_SOURCES))
def test_a_source_that_completes_while_subscribed_is_settled(name: str) -> None:
    expected = SYNC_SOURCES[name]().pipe(ops.to_list()).run()
    settled = settle(SYNC_SOURCES[name]())
    assert is_sync(settled)
    assert list(settled.items_now()) == expected


@pytest.mark.parametrize("name", sorted(SYNC_SOURCES))
def test_it_is_settled_inside_a_running_trampoline_too(name: str) -> None:
    # A run holds the thread's trampoline, where rx.just / rx.of would queue their items.
    found = rx.just(0).pipe(ops.flat_map(lambda _: rx.just(is_sync(settle(SYNC_SOURCES[name]())))))
    assert found.run() is True


def test_a_source_that_answers_later_is_continued_in_order() -> None:
    subject: Subject[int] = Subject()
    source = rx.concat(rx.of(1, 2), subject)
    settled = settle(source)
    assert not is_sync(settled)
    subject.on_next(3)  # before anyone took over: held
    got: list[int] = []
    done = threading.Event()
    settled.subscribe(got.append, on_completed=done.set)
    worker = threading.Thread(target=lambda: (subject.on_next(4), subject.on_completed()))
    worker.start()
    worker.join()
    assert done.is_set() and got == [1, 2, 3, 4]


def test_a_failure_is_continued_with_its_items_first() -> None:
    settled = settle(rx.concat(rx.of(1), rx.throw(ValueError("down"))))
    assert not is_sync(settled)
    got: list[Any] = []
    settled.subscribe(got.append, lambda e: got.append(repr(e)))
    assert got == [1, "ValueError('down')"]


def test_disposing_the_continuation_disposes_the_source() -> None:
    disposed = threading.Event()

    def subscribe(observer: Any, _: Any = None) -> Disposable:
        return Disposable(disposed.set)

    settled = settle(rx.create(subscribe))
    settled.subscribe(lambda _: None).dispose()
    assert disposed.is_set()


def test_a_source_built_from_a_timer_keeps_its_own_scheduler() -> None:
    settled = settle(rx.timer(0.01).pipe(ops.map(lambda _: "late")))
    assert not is_sync(settled)  # the timer runs on its timeout thread, not the caller's
    assert settled.pipe(ops.to_list()).run() == ["late"]
