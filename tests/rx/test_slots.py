"""Slot and Both: lock-free handles of one subscription (set by one writer, disposed by any)."""

from __future__ import annotations

import threading

from reactivex.disposable import Disposable

from adk_rx.rx._engine.slots import Both, Slot


def _probe(log: list[str], name: str) -> Disposable:
    return Disposable(lambda: log.append(name))


def test_setting_a_handle_disposes_the_one_before() -> None:
    log: list[str] = []
    slot = Slot()
    slot.disposable = _probe(log, "a")
    slot.disposable = _probe(log, "b")
    assert log == ["a"]
    slot.dispose()
    assert log == ["a", "b"]
    assert slot.is_disposed and slot.disposable is None


def test_a_handle_set_after_disposal_is_disposed_at_once() -> None:
    log: list[str] = []
    slot = Slot()
    slot.dispose()
    slot.disposable = _probe(log, "late")
    assert log == ["late"]
    assert slot.disposable is None


def test_setting_the_same_handle_again_keeps_it() -> None:
    log: list[str] = []
    slot = Slot()
    handle = _probe(log, "a")
    slot.disposable = handle
    slot.disposable = handle
    assert log == []


def test_a_disposal_racing_with_a_set_never_leaves_a_handle_running() -> None:
    for _ in range(300):
        slot = Slot()
        handles = [threading.Event() for _ in range(20)]
        start = threading.Barrier(2)

        def writer(
            slot: Slot = slot,
            handles: list[threading.Event] = handles,
            start: threading.Barrier = start,
        ) -> None:
            start.wait()
            for handle in handles:
                slot.disposable = Disposable(handle.set)

        thread = threading.Thread(target=writer)
        thread.start()
        start.wait()
        slot.dispose()
        thread.join()
        assert all(handle.is_set() for handle in handles)


def test_both_disposes_its_two_handles() -> None:
    log: list[str] = []
    Both(_probe(log, "a"), _probe(log, "b")).dispose()
    assert log == ["a", "b"]
