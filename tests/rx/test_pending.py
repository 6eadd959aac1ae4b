"""PendingResult: a Single's outcome read at once, or through a subject made only then."""

from __future__ import annotations

from reactivex.subject import Subject

from adk_rx.rx._engine.pending import PendingResult


def test_a_source_that_answered_while_subscribed_is_read_at_once() -> None:
    seen: list[int] = []
    result: PendingResult[int] = PendingResult(seen.append)
    result.on_next(7)
    result.on_completed()
    assert result.result_now() == 7
    assert seen == [7]


def test_a_later_answer_reaches_whoever_subscribed_to_the_subject_meanwhile() -> None:
    result: PendingResult[int] = PendingResult(lambda _: None)
    source: Subject[int] = Subject()
    source.subscribe(result.on_next, result.on_error, result.on_completed)
    assert result.result_now() is None
    got: list[object] = []
    result.subject.subscribe(got.append, got.append, lambda: got.append("done"))
    source.on_next(3)
    source.on_completed()
    assert got == [3, "done"]


def test_the_subject_replays_an_outcome_that_came_before_it_was_asked_for() -> None:
    result: PendingResult[int] = PendingResult(lambda _: None)
    error = RuntimeError("store down")
    result.on_error(error)
    got: list[object] = []
    result.subject.subscribe(got.append, got.append)
    assert result.result_now() is None
    assert got == [error]
