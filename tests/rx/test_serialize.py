from __future__ import annotations

import threading

import pytest
from reactivex.subject import Subject

from adk_rx.rx import SerializedSubject, serialize

from ._support import WAIT

pytestmark = pytest.mark.timeout(20)

PRODUCERS = 4
PER_PRODUCER = 300


class OverlapProbe:
    """An observer that records how many on_next calls ever overlapped."""

    def __init__(self) -> None:
        self.active = 0
        self.max_active = 0
        self.items: list[tuple[int, int]] = []
        self.completions = 0
        self._lock = threading.Lock()

    def on_next(self, item: tuple[int, int]) -> None:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self.items.append(item)
        threading.Event().wait(0.0001)  # widen the window in which an overlap would show
        with self._lock:
            self.active -= 1

    def on_error(self, error: Exception) -> None:
        raise error

    def on_completed(self) -> None:
        self.completions += 1


def hammer(subject: Subject[tuple[int, int]]) -> None:
    barrier = threading.Barrier(PRODUCERS)

    def produce(producer: int) -> None:
        barrier.wait(WAIT)
        for i in range(PER_PRODUCER):
            subject.on_next((producer, i))
        subject.on_completed()

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(PRODUCERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)


def check(probe: OverlapProbe) -> None:
    assert probe.max_active == 1
    assert probe.completions == 1
    # A producer that completes ends the stream; every item delivered is in producer order.
    for producer in range(PRODUCERS):
        mine = [i for p, i in probe.items if p == producer]
        assert mine == sorted(mine)


def test_serialize_delivers_concurrent_notifications_one_at_a_time() -> None:
    subject: Subject[tuple[int, int]] = Subject()
    probe = OverlapProbe()
    subject.pipe(serialize()).subscribe(probe)
    hammer(subject)
    check(probe)


def test_serialized_subject_delivers_concurrent_on_next_one_at_a_time() -> None:
    subject: SerializedSubject[tuple[int, int]] = SerializedSubject()
    probe = OverlapProbe()
    subject.subscribe(probe)
    hammer(subject)
    check(probe)


def test_serialize_is_lossless_until_completion() -> None:
    subject: SerializedSubject[int] = SerializedSubject()
    received: list[int] = []
    subject.subscribe(received.append)
    barrier = threading.Barrier(PRODUCERS)

    def produce(offset: int) -> None:
        barrier.wait(WAIT)
        for i in range(PER_PRODUCER):
            subject.on_next(offset + i)

    threads = [threading.Thread(target=produce, args=(p * 1000,)) for p in range(PRODUCERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert sorted(received) == sorted(p * 1000 + i for p in range(4) for i in range(300))
