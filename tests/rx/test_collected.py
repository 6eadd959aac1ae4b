"""collected and each_of: a source's end waited for (its items kept aside), each item mapped."""

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
