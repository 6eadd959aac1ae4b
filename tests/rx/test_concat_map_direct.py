"""concat_map_direct: concat_map that emits a mapper's SyncObservable without subscribing it."""

from __future__ import annotations

import sys
from typing import Any

import reactivex as rx
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import items, just

on_next, on_completed, on_error = (
    ReactiveTest.on_next,
    ReactiveTest.on_completed,
    ReactiveTest.on_error,
)


def test_answers_already_here_are_emitted_at_once_and_an_inner_holds_back_later_items() -> None:
    # source:               --a-----b-----c--|
    # mapper(b) = inner           -------b1---b2|   (c waits for the inner)
    # concat_map_direct:    --a'----b1---b2-c'-|
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, "a"), on_next(220, "b"), on_next(230, "c"), on_completed(240)
    )
    inner = scheduler.create_cold_observable(on_next(15, "b1"), on_next(20, "b2"), on_completed(25))
    arrived: list[tuple[int, str]] = []

    def mapper(item: str) -> rx.Observable[str]:
        return inner if item == "b" else just(item + "'")

    result = scheduler.start(
        lambda: source.pipe(
            concat_map_direct(mapper, on_arrival=lambda x: arrived.append((scheduler.clock, x)))
        )
    )
    assert result.messages == [
        on_next(210, "a'"),
        on_next(235, "b1"),
        on_next(240, "b2"),
        on_next(245, "c'"),
        on_completed(245),
    ]
    assert arrived == [(210, "a"), (220, "b"), (230, "c")]  # on arrival, before its turn


def test_an_error_of_the_mapper_or_of_an_inner_ends_the_stream() -> None:
    errors: list[str] = []

    def mapper(item: int) -> rx.Observable[int]:
        if item == 2:
            return rx.throw(ValueError("inner"))
        return just(item)

    got: list[object] = []
    items([1, 2, 3]).pipe(concat_map_direct(mapper)).subscribe(
        got.append, lambda e: errors.append(str(e))
    )
    assert got == [1]
    assert errors == ["inner"]


def test_a_long_synchronous_source_does_not_grow_the_stack() -> None:
    count = sys.getrecursionlimit() * 2
    got: list[int] = []
    items(list(range(count))).pipe(concat_map_direct(lambda i: items([i]))).subscribe(got.append)
    assert got == list(range(count))


def test_disposing_stops_the_inner_and_drops_queued_items() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(on_next(210, 1), on_next(220, 2), on_completed(230))
    inner = scheduler.create_cold_observable(on_next(50, "late"), on_completed(60))
    result = scheduler.start(lambda: source.pipe(concat_map_direct(lambda _: inner)), disposed=240)
    assert result.messages == []
    assert inner.subscriptions == [ReactiveTest.subscribe(210, 240)]


class _Held(Exception):
    pass


def test_a_drain_on_error_waits_for_the_queued_items_then_is_passed_on() -> None:
    # source:               --a--b--X(held)
    # mapper(a) = inner     ---a1-------a2|
    # concat_map_direct:    ---a1-------a2-b'-X(held)
    scheduler = TestScheduler()
    held = _Held("stop")
    source = scheduler.create_hot_observable(
        on_next(210, "a"), on_next(215, "b"), on_error(220, held)
    )
    inner = scheduler.create_cold_observable(on_next(5, "a1"), on_next(20, "a2"), on_completed(25))

    def mapper(item: str) -> rx.Observable[str]:
        return inner if item == "a" else just(item + "'")

    result = scheduler.start(lambda: source.pipe(concat_map_direct(mapper, drain_on=_Held)))

    assert result.messages == [
        on_next(215, "a1"),
        on_next(230, "a2"),
        on_next(235, "b'"),
        on_error(235, held),
    ]


def test_other_errors_still_end_the_stream_at_once() -> None:
    scheduler = TestScheduler()
    boom = ValueError("boom")
    source = scheduler.create_hot_observable(on_next(210, "a"), on_error(220, boom))
    inner = scheduler.create_cold_observable(on_next(20, "a1"), on_completed(25))

    result = scheduler.start(
        lambda: source.pipe(concat_map_direct(lambda _: inner, drain_on=_Held))
    )

    assert result.messages == [on_error(220, boom)]


class _Light(str):
    """An item that needs no work (``passes``)."""


def test_items_that_need_no_work_go_through_at_once_but_wait_behind_an_inner() -> None:
    # direct(a) = A, c passes, direct(b) = None
    # source:               --a-----b-----c--d--|
    # mapper(b) = inner           -------b1---b2|   (c and d wait: neither is asked for)
    # concat_map_direct:    --A-----b1---b2-c-D-|
    scheduler = TestScheduler()
    c = _Light("c")
    source = scheduler.create_hot_observable(
        on_next(210, "a"), on_next(220, "b"), on_next(230, c), on_next(232, "d"), on_completed(240)
    )
    inner = scheduler.create_cold_observable(on_next(15, "b1"), on_next(20, "b2"), on_completed(25))
    asked: list[str] = []
    arrived: list[str] = []

    def direct(item: str) -> str | None:
        asked.append(item)
        return None if item == "b" else item.upper()

    def mapper(item: str) -> rx.Observable[str]:
        return inner if item == "b" else just(item.upper())

    result = scheduler.start(
        lambda: source.pipe(
            concat_map_direct(mapper, on_arrival=arrived.append, direct=direct, passes=_Light)
        )
    )
    assert result.messages == [
        on_next(210, "A"),
        on_next(235, "b1"),
        on_next(240, "b2"),
        on_next(245, "C"),  # mapped once its turn came, as any other item
        on_next(245, "D"),
        on_completed(245),
    ]
    assert asked == ["a", "b"]
    assert arrived == ["b", "c", "d"]  # not for an item direct mapped


def test_an_item_a_subscriber_sends_back_while_a_direct_one_is_emitted_waits_its_turn() -> None:
    subject: rx.subject.Subject[str] = rx.subject.Subject()
    got: list[str] = []

    def on_next_(item: str) -> None:
        got.append(f"<{item}")
        if item == "a":
            subject.on_next("b")  # sent back from inside the subscriber
            subject.on_completed()
        got.append(f"{item}>")

    done: list[bool] = []
    subject.pipe(concat_map_direct(just, direct=lambda x: x)).subscribe(
        on_next_, on_completed=lambda: done.append(True)
    )
    subject.on_next("a")
    assert got == ["<a", "a>", "<b", "b>"]  # never one item inside another's on_next
    assert done == [True]


def test_a_stop_from_inside_on_next_drops_the_rest_of_a_source_still_emitting() -> None:
    # The source's items reach the sink with no wrapper of their own: the sink's own stop
    # must drop what a source still emitting inside its subscribe sends after a take(k).
    emitted: list[int] = []

    def source(observer: Any, _: Any = None) -> None:
        for i in range(10):
            emitted.append(i)
            observer.on_next(i)
        observer.on_completed()

    got: list[int] = []
    done: list[bool] = []
    rx.create(source).pipe(concat_map_direct(just, direct=lambda x: x), ops.take(3)).subscribe(
        got.append, on_completed=lambda: done.append(True)
    )
    assert got == [0, 1, 2] and done == [True]


def test_a_settled_source_is_taken_over_in_order_and_disposed_with_it() -> None:
    # A source settled already (a model answering on another thread): the sink takes its
    # running subscription over, the items it held first, the rest as they come.
    source: Subject[str] = Subject()
    settled = settle(source)
    source.on_next("a")  # before anyone took over: held, then replayed
    got: list[Any] = []
    mapped = concat_map_direct(lambda x: just(x.upper()), direct=lambda x: x if x == "b" else None)
    subscription = mapped(settled).subscribe(got.append, got.append, lambda: got.append("|"))
    source.on_next("b")  # mapped directly
    assert got == ["A", "b"]
    subscription.dispose()
    assert not source.observers  # the settled subscription was disposed with the sink
    source.on_next("c")
    assert got == ["A", "b"]
    ended = settle(rx.concat(rx.of("x"), rx.throw(ValueError("down"))))  # failed meanwhile
    mapped(ended).subscribe(got.append, lambda e: got.append(repr(e)))
    assert got == ["A", "b", "X", "ValueError('down')"]
