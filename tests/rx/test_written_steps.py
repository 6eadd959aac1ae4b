"""WrittenSteps: a step generator and the writer of its items, as plain calls, resuming itself."""

from __future__ import annotations

import gc
import threading
from collections.abc import Generator
from typing import Any

import pytest
from reactivex import Observable
from reactivex.subject import Subject

from adk_rx.rx._engine.collected import collected
from adk_rx.rx._engine.concat_map_direct import concat_map_direct
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import SyncObservable, just
from adk_rx.rx._engine.written_steps import WrittenSteps


class _Chunk(str):
    """An item emitted as it is (nothing to write)."""


class _Log:
    """A writer whose appends answer at once, or wait for ``release`` when ``waits``."""

    def __init__(self, waits: set[str] | None = None) -> None:
        self.waits = waits or set()
        self.applied: list[str] = []
        self.stored: list[str] = []
        self.emitted: list[str] = []
        self.ends: list[Any] = []
        self.pending: dict[str, Subject[str]] = {}

    def apply(self, item: str) -> None:
        self.applied.append(item)

    def store(self, item: str) -> Observable[str]:
        if item in self.waits:
            append: Subject[str] = Subject()
            self.pending[item] = append
            return append
        self.stored.append(item)
        return SyncObservable((item.upper(),))

    def write(self, item: str) -> Observable[str]:
        self.apply(item)
        return self.store(item)

    def release(self, item: str) -> None:
        self.stored.append(item)
        append = self.pending.pop(item)
        append.on_next(item.upper())
        append.on_completed()

    # Where the written items go, and the end (the log is the driver's owner too).
    def on_next(self, item: str) -> None:
        self.emitted.append(item)

    def steps_done(self, end: None) -> None:
        self.ends.append(end)

    def steps_failed(self, error: Exception) -> None:
        self.ends.append(f"error: {error}")

    def steps(self, generator: Generator[Any, Any, Any]) -> WrittenSteps[str]:
        return WrittenSteps(generator, self, self, self, _Chunk, None)


def test_items_here_are_written_at_once_and_an_inner_answering_later_is_resumed_from() -> None:
    # steps:     just(a)  inner          just(c after <inner's last>)
    # inner:              --b--x|        (x a chunk: emitted, not written)
    # emitted:   A        --B--x         C AFTER X|
    log = _Log()
    inner: Subject[str] = Subject()
    seen: list[Any] = []

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        last = yield inner
        seen.append(last)
        yield just(f"c after {last}")

    log.steps(steps()).run()
    assert log.emitted == ["A"] and log.ends == []
    inner.on_next("b")
    inner.on_next(_Chunk("x"))
    assert log.emitted == ["A", "B", "x"]
    inner.on_completed()
    assert seen == ["x"]
    assert log.emitted == ["A", "B", "x", "C AFTER X"]
    assert log.stored == ["a", "b", "c after x"]
    assert log.ends == [None]


@pytest.mark.parametrize("waits_on", ["collected", "stage"])
def test_a_settled_answer_it_waited_for_keeps_nothing_once_it_ended(waits_on: str) -> None:
    # The driver takes a settled answer (settle) over itself, or drives the stage around it
    # as its observer, its handle kept until the next inner; once the answer ended, the
    # handle lets go of the driver: with the cyclic GC off, the driver is freed with its
    # last reference.
    log = _Log()
    answer: Subject[str] = Subject()
    into: list[str] = []

    def steps() -> Generator[Any, Any, None]:
        if waits_on == "collected":
            yield collected(settle(answer), into)
            yield just(f"got {into}")
        else:
            chunk = concat_map_direct(just, direct=lambda x: _Chunk(x) if x == "c" else None)
            last = yield chunk(settle(answer))
            yield just(f"after {last}")

    gc.collect()
    gc.disable()
    try:
        driver = log.steps(steps())
        driver.run()

        def answering() -> None:
            answer.on_next("c")
            answer.on_next("a")
            answer.on_completed()

        thread = threading.Thread(target=answering)
        thread.start()
        thread.join()
        if waits_on == "collected":
            assert log.emitted == ["GOT ['C', 'A']"]
        else:
            assert log.emitted == ["c", "A", "AFTER A"]
        assert log.ends == [None]
        del driver
        assert not [o for o in gc.get_objects() if type(o) is WrittenSteps]
    finally:
        gc.enable()


def test_an_inner_error_is_raised_in_the_generator_which_may_recover() -> None:
    log = _Log()
    inner: Subject[str] = Subject()

    def steps() -> Generator[Any, Any, None]:
        try:
            yield inner
        except ValueError as exc:
            yield just(f"recovered from {exc}")
        yield inner2

    inner2: Subject[str] = Subject()
    log.steps(steps()).run()
    inner.on_error(ValueError("down"))
    assert log.emitted == ["RECOVERED FROM DOWN"]
    inner2.on_error(RuntimeError("again"))
    assert log.ends == ["error: again"]


def test_once_a_write_waits_the_rest_is_applied_on_arrival_and_stored_in_order() -> None:
    # The append of b waits: c, d are applied as they come (the generator runs ahead), stored
    # and emitted only after B, and the end follows the last write.
    log = _Log(waits={"b"})
    inner: Subject[str] = Subject()

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        yield inner
        yield just("d")

    log.steps(steps()).run()
    inner.on_next("b")
    inner.on_next("c")
    inner.on_completed()
    assert log.applied == ["a", "b", "c", "d"]
    assert log.emitted == ["A"] and log.ends == []
    log.release("b")
    assert log.emitted == ["A", "B", "C", "D"]
    assert log.stored == ["a", "b", "c", "d"]
    assert log.ends == [None]


def test_an_error_after_a_waiting_write_comes_after_the_writes_before_it() -> None:
    log = _Log(waits={"a"})

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        yield just("b")
        raise RuntimeError("model down")

    log.steps(steps()).run()
    assert log.ends == [] and log.emitted == []
    log.release("a")
    assert log.emitted == ["A", "B"]
    assert log.ends == ["error: model down"]


def test_disposal_while_an_inner_waits_stops_it_and_closes_the_generator() -> None:
    log = _Log()
    inner: Subject[str] = Subject()
    closed: list[bool] = []

    def steps() -> Generator[Any, Any, None]:
        try:
            yield inner
            yield just("never")
        finally:
            closed.append(True)

    driver = log.steps(steps())
    driver.run()
    assert inner.observers  # subscribed, waiting
    driver.dispose()
    assert closed == [True]
    assert not inner.observers  # the inner was disposed
    inner.on_next("late")
    inner.on_completed()
    assert log.emitted == [] and log.ends == []


def test_disposal_while_a_write_waits_emits_nothing_more() -> None:
    log = _Log(waits={"a"})

    def steps() -> Generator[Any, Any, None]:
        yield just("a")
        yield just("b")

    driver = log.steps(steps())
    driver.run()
    driver.dispose()
    log.release("a")
    assert log.emitted == [] and log.ends == []
