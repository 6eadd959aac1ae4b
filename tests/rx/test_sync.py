"""Scheduler-free Singles, Maybes and inner-stage subscriptions."""

from __future__ import annotations

import reactivex as rx
from reactivex import operators as ops
from reactivex.disposable import Disposable

from adk_rx.rx._engine.sync import completable, empty, items, just, maybe, single, subscribe_inner


class _NoOwner:
    """A stage chain's owner that is told of no error (none comes)."""

    def chain_failed(self, error: Exception) -> None:
        raise AssertionError(f"unexpected failure: {error}")


def _collect(source: rx.Observable[object]) -> list[object]:
    got: list[object] = []
    source.subscribe(got.append, lambda e: got.append(("error", str(e))), lambda: got.append("|"))
    return got


def test_the_helpers_emit_on_the_subscribing_thread_at_subscribe_time() -> None:
    assert _collect(just(1)) == [1, "|"]
    assert _collect(single(lambda: 2)) == [2, "|"]
    assert _collect(maybe(lambda: None)) == ["|"]
    assert _collect(completable(lambda: None)) == ["|"]
    assert _collect(empty()) == ["|"]
    assert _collect(items([1, 2, 3])) == [1, 2, 3, "|"]


def test_an_exception_in_the_callable_becomes_on_error() -> None:
    def boom() -> int:
        raise ValueError("boom")

    assert _collect(single(boom)) == [("error", "boom")]


def test_items_stop_once_the_subscriber_disposes_from_inside_on_next() -> None:
    got = _collect(items(list(range(100))).pipe(ops.take(3)))
    assert got == [0, 1, 2, "|"]


def test_an_inner_subscription_releases_its_source_when_the_source_completes() -> None:
    disposed: list[str] = []

    def source(observer: object, scheduler: object = None) -> Disposable:
        observer.on_next(1)  # type: ignore[attr-defined]
        observer.on_completed()  # type: ignore[attr-defined]
        return Disposable(lambda: disposed.append("source"))

    got: list[object] = []
    subscribe_inner(rx.Observable(source), got.append, got.append, lambda: got.append("|"))
    assert got == [1, "|"]
    assert disposed == ["source"]  # like auto-detach: take_while & co. rely on it


def test_disposing_an_inner_subscription_drops_late_items_and_disposes_the_source() -> None:
    observers: list[object] = []
    disposed: list[str] = []

    def source(observer: object, scheduler: object = None) -> Disposable:
        observers.append(observer)
        return Disposable(lambda: disposed.append("source"))

    got: list[object] = []
    subscription = subscribe_inner(rx.Observable(source), got.append, got.append, got.append)
    subscription.dispose()
    observers[0].on_next("late")  # type: ignore[attr-defined]
    assert got == []
    assert disposed == ["source"]


def test_a_subscribe_function_that_returns_nothing_is_accepted() -> None:
    def source(observer: object, scheduler: object = None) -> None:
        observer.on_completed()  # type: ignore[attr-defined]

    done: list[str] = []
    subscribe_inner(rx.Observable(source), print, print, lambda: done.append("|")).dispose()
    assert done == ["|"]


def test_resume_on_error_continues_with_the_handlers_stream() -> None:
    from adk_rx.rx._engine.sync import resume_on_error

    failing = rx.concat(just(1), rx.throw(ValueError("e")))
    got = _collect(failing.pipe(resume_on_error(lambda exc: items([str(exc), 2]))))
    assert got == [1, "e", 2, "|"]


def test_resume_on_error_reports_a_handler_that_raises() -> None:
    from adk_rx.rx._engine.sync import resume_on_error

    def handler(exc: Exception) -> rx.Observable[object]:
        raise RuntimeError("handler broke")

    got = _collect(rx.throw(ValueError("e")).pipe(resume_on_error(handler)))
    assert got == [("error", "handler broke")]


def test_the_helpers_hand_their_items_over_without_a_subscription() -> None:
    from adk_rx.rx._engine.sync import is_sync

    calls: list[str] = []
    helpers = [
        (just(1), (1,)),
        (single(lambda: calls.append("single") or 2), (2,)),
        (maybe(lambda: None), ()),
        (maybe(lambda: 3), (3,)),
        (completable(lambda: calls.append("completable")), ()),
        (empty(), ()),
        (items([1, 2]), (1, 2)),
    ]
    for source, expected in helpers:
        assert is_sync(source)
        assert source.items_now() == expected  # type: ignore[attr-defined]
    assert calls == ["single", "completable"]  # each call runs the function once
    assert not is_sync(rx.just(1)) and not is_sync(just(1).pipe(ops.map(lambda x: x)))


def test_an_error_is_raised_by_items_now_as_the_stream_would_end_with_it() -> None:
    import pytest

    def boom() -> int:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        single(boom).items_now()  # type: ignore[attr-defined]
    assert _collect(single(boom)) == [("error", "boom")]


def test_the_stage_operators_take_sync_items_without_subscribing() -> None:
    # A SyncObservable whose subscribe would fail: the operators must use items_now.
    from adk_rx.rx._engine.concat_map_direct import concat_map_direct
    from adk_rx.rx._engine.generator_stage import from_generator
    from adk_rx.rx._engine.stage_chain import StageChain
    from adk_rx.rx._engine.sync import SyncObservable

    def refuse(*_: object) -> None:
        raise AssertionError("subscribed")

    def sync_of(*values: object) -> SyncObservable[object]:
        source = SyncObservable(values)
        source._subscribe_core = refuse  # type: ignore[method-assign]
        return source

    mapped = rx.from_iterable([1, 2]).pipe(concat_map_direct(lambda n: sync_of(n, n * 10)))
    assert _collect(mapped) == [1, 10, 2, 20, "|"]

    def steps():  # type: ignore[no-untyped-def]
        last = yield sync_of("a", "b")
        yield sync_of(f"after {last}")

    assert _collect(from_generator(steps)) == ["a", "b", "after b", "|"]

    chain = StageChain(_NoOwner())
    assert chain.begin()
    got: list[object] = []
    chain.step(lambda: sync_of("x", "y"), got.append)
    assert got == ["y"]  # then() gets the last item, at once
