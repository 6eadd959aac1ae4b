"""collected and each_of: a source's end waited for (its items kept aside), each item mapped."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import Observable
from reactivex.subject import Subject

from adk_rx.rx._engine.collected import collected
from adk_rx.rx._engine.settle import settle

# Each test runs on the source as it is and on its settled answer (subscribed already,
# going on later), which collects into the list itself.
SOURCES = pytest.mark.parametrize("settled", [False, True], ids=["source", "settled answer"])


def _source(subject: Subject[str], settled: bool) -> Observable[str]:
    return settle(subject) if settled else subject


@SOURCES
def test_items_are_kept_aside_and_the_end_is_passed_on(settled: bool) -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    seen: list[Any] = []
    collected(_source(source, settled), into).subscribe(
        seen.append, seen.append, lambda: seen.append("|")
    )
    source.on_next("a")
    source.on_next("b")
    assert into == ["a", "b"] and seen == []
    source.on_completed()
    assert seen == ["|"]


@SOURCES
def test_an_error_is_passed_on_with_the_items_before_it_kept(settled: bool) -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    seen: list[Any] = []
    collected(_source(source, settled), into).subscribe(seen.append, seen.append)
    source.on_next("a")
    error = ValueError("down")
    source.on_error(error)
    assert into == ["a"] and seen == [error]


@SOURCES
def test_disposing_it_disposes_the_source(settled: bool) -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    subscription = collected(_source(source, settled), into).subscribe()
    assert source.observers
    subscription.dispose()
    assert not source.observers
    source.on_next("late")
    assert into == []


def test_each_of_emits_each_items_list_in_its_place() -> None:
    from adk_rx.rx._engine.collected import each_of

    source: Subject[str] = Subject()
    seen: list[Any] = []
    each_of(source, lambda x: [x + "1", x + "2"]).subscribe(
        seen.append, seen.append, lambda: seen.append("|")
    )
    source.on_next("a")
    assert seen == ["a1", "a2"]
    source.on_next("b")
    source.on_completed()
    assert seen == ["a1", "a2", "b1", "b2", "|"]


def test_each_of_ends_with_the_functions_error_and_lets_go_of_the_source() -> None:
    from adk_rx.rx._engine.collected import each_of

    source: Subject[str] = Subject()
    seen: list[Any] = []
    error = KeyError("bad")

    def fails(_: str) -> list[str]:
        raise error

    each_of(source, fails).subscribe(seen.append, seen.append)
    source.on_next("a")
    assert seen == [error]
    assert not source.observers
