"""collected: a source's end waited for, its items kept aside instead of emitted."""

from __future__ import annotations

from typing import Any

from reactivex.subject import Subject

from adk_rx.rx._engine.collected import collected


def test_items_are_kept_aside_and_the_end_is_passed_on() -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    seen: list[Any] = []
    collected(source, into).subscribe(seen.append, seen.append, lambda: seen.append("|"))
    source.on_next("a")
    source.on_next("b")
    assert into == ["a", "b"] and seen == []
    source.on_completed()
    assert seen == ["|"]


def test_an_error_is_passed_on_with_the_items_before_it_kept() -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    seen: list[Any] = []
    collected(source, into).subscribe(seen.append, seen.append)
    source.on_next("a")
    error = ValueError("down")
    source.on_error(error)
    assert into == ["a"] and seen == [error]


def test_disposing_it_disposes_the_source() -> None:
    source: Subject[str] = Subject()
    into: list[str] = []
    subscription = collected(source, into).subscribe()
    assert source.observers
    subscription.dispose()
    assert not source.observers
    source.on_next("late")
    assert into == []
