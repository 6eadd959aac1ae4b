"""RxJava's ``onBackpressure*`` operators for a consumer that is slower than its producers.

There is no scheduler and no thread hop. While the consumer's ``on_next`` is running (on
another producer's thread), newly arriving items are buffered, dropped or reduced to the
latest; the producer never blocks, and the thread that finds the consumer idle delivers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from reactivex import Observable

from adk_rx.rx._engine.queue_drain import queue_drain
from adk_rx.rx.overflow import BUFFER_STRATEGIES, BufferOverflow, check_overflow

__all__ = ["on_backpressure_buffer", "on_backpressure_drop", "on_backpressure_latest"]

T = TypeVar("T")


def on_backpressure_buffer(
    capacity: int,
    overflow: BufferOverflow = "error",
    on_overflow: Callable[[T], object] | None = None,
) -> Callable[[Observable[T]], Observable[T]]:
    """Buffers up to ``capacity`` items while the consumer is busy.

    ``capacity`` counts waiting items, not the one being delivered. With ``"error"`` a full
    buffer discards the waiting items, signals ``BackpressureError`` and disposes upstream.
    With ``"drop_oldest"`` / ``"drop_latest"`` the oldest / newest waiting item is evicted to
    make room, and ``on_overflow`` receives it.

    Marble diagram (capacity 2; the consumer is busy with ``a`` until ``|`` of the long box)::

        source:                      -a-b-c-d-e-----|
        consumer busy:                [a........]
        "drop_oldest":               -a----------d-e|      (b, c evicted)
        "drop_latest":               -a----------b-e|      (c, d evicted)
        "error":                     -a----------#         (BackpressureError; upstream disposed)

    Args:
        capacity: how many items may wait (at least 1).
        overflow: ``"error"``, ``"drop_oldest"`` or ``"drop_latest"``.
        on_overflow: called, on the producer's thread, with each evicted item.

    Returns:
        The operator.

    Raises:
        ValueError: for a capacity below 1 or an unknown strategy.
    """
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    check_overflow(overflow, BUFFER_STRATEGIES)
    return queue_drain(capacity, overflow, on_overflow)


def on_backpressure_drop(
    on_drop: Callable[[T], object] | None = None, *, capacity: int = 0
) -> Callable[[Observable[T]], Observable[T]]:
    """Drops the items that arrive while the consumer is busy.

    With the default ``capacity=0`` an item is delivered only if the consumer is idle when it
    arrives (RxJava's ``onBackpressureDrop``). A positive ``capacity`` first lets that many
    items wait, then drops arrivals (``onBackpressureDrop`` in front of a bounded
    ``observeOn``).

    Marble diagram (the consumer is busy with ``a`` for a while)::

        source:                      -a-b-c-d-----e-|
        consumer busy:                [a......]
        on_backpressure_drop():      -a-----------e-|       (b, c, d dropped)
        capacity=1:                  -a-------b---e-|       (c, d dropped)

    Args:
        on_drop: called, on the producer's thread, with each dropped item.
        capacity: how many items may wait before arrivals are dropped.

    Returns:
        The operator.
    """
    if capacity < 0:
        raise ValueError(f"capacity must not be negative, got {capacity}")
    return queue_drain(capacity, "drop_newest", on_drop)


def on_backpressure_latest() -> Callable[[Observable[T]], Observable[T]]:
    """Keeps only the most recent item that arrived while the consumer was busy.

    Marble diagram (the consumer is busy with ``a`` for a while)::

        source:                      -a-b-c-d-------e-|
        consumer busy:                [a......]
        on_backpressure_latest():    -a-------d-----e-|     (b, c replaced by d)

    Returns:
        The operator.
    """
    return queue_drain(1, "drop_oldest")
