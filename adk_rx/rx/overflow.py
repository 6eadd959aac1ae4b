"""Overflow strategies of the bounded buffers, with RxJava's meaning.

When an item arrives and ``capacity`` items already wait:

* ``"error"``: the buffer overflowed; the operator signals ``BackpressureError`` downstream and
  disposes upstream (RxJava's default ``onBackpressureBuffer``);
* ``"drop_oldest"``: the oldest waiting item is evicted and the new one appended;
* ``"drop_latest"``: the newest *waiting* item is evicted and the new one appended (RxJava's
  ``DROP_LATEST``: the buffer always ends with the most recent item);
* ``"drop_newest"``: the arriving item is discarded (RxJava's ``onBackpressureDrop``);
* ``"block"``: the producer's thread waits for room (only :func:`observe_on_bounded`).
"""

from __future__ import annotations

from collections import deque
from typing import Literal, TypeVar, get_args

__all__ = [
    "ACCEPTED",
    "OVERFLOWED",
    "BufferOverflow",
    "DropStrategy",
    "Overflow",
    "check_overflow",
    "offer",
]

T = TypeVar("T")

BufferOverflow = Literal["error", "drop_oldest", "drop_latest"]
"""The strategies of :func:`on_backpressure_buffer`."""

Overflow = Literal["error", "drop_oldest", "drop_latest", "block"]
"""The strategies of :func:`observe_on_bounded`."""

DropStrategy = Literal["error", "drop_oldest", "drop_latest", "drop_newest"]


class _Overflowed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "OVERFLOWED"


class _Accepted:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ACCEPTED"


OVERFLOWED = _Overflowed()
ACCEPTED = _Accepted()


def check_overflow(overflow: str, allowed: tuple[str, ...]) -> None:
    """Raises ``ValueError`` for a strategy name the operator does not know."""
    if overflow not in allowed:
        raise ValueError(f"overflow must be one of {', '.join(allowed)}; got {overflow!r}")


BUFFER_STRATEGIES: tuple[str, ...] = get_args(BufferOverflow)
BOUNDED_STRATEGIES: tuple[str, ...] = get_args(Overflow)


def offer(
    items: deque[T], item: T, capacity: int | None, overflow: DropStrategy
) -> _Accepted | _Overflowed | tuple[T]:
    """Adds ``item`` to ``items`` under a non-blocking strategy; the caller holds the lock.

    Args:
        items: the buffer.
        item: the arriving item.
        capacity: the most items the buffer may hold; ``None`` for no bound.
        overflow: what to do when the buffer is full.

    Returns:
        ``ACCEPTED``, ``OVERFLOWED`` (nothing changed; the caller must fail), or a one-tuple
        holding the item that was dropped.
    """
    if capacity is None or len(items) < capacity:
        items.append(item)
        return ACCEPTED
    if overflow == "error":
        return OVERFLOWED
    if overflow == "drop_newest" or capacity == 0:
        return (item,)
    dropped = items.popleft() if overflow == "drop_oldest" else items.pop()
    items.append(item)
    return (dropped,)
