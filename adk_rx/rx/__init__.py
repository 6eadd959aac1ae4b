"""Reactive helpers: schedulers, bridges between Rx, threads and asyncio, and flow control.

The names of ``__all__`` are the operators and helpers users may call; each module directly in
this package defines some of them. What the runtime is built from besides (the generator
driver, the stage chain, synchronous Observables, ...) is the private engine,
:mod:`adk_rx.rx._engine`, free to change with the runtime.

This package depends only on ``reactivex`` and the standard library (plus the error tree of
``adk_rx.errors``), so the rest of adk_rx can build on it.
"""

from adk_rx.rx._engine.sync import completable, maybe, single
from adk_rx.rx.backpressure import (
    on_backpressure_buffer,
    on_backpressure_drop,
    on_backpressure_latest,
)
from adk_rx.rx.bridges import (
    from_async,
    from_blocking,
    from_blocking_iterable,
    to_async_iterable,
    to_iterable,
)
from adk_rx.rx.bulkhead import Bulkhead
from adk_rx.rx.emitter import Emitter, from_emitter
from adk_rx.rx.expand import expand
from adk_rx.rx.observe_on_bounded import observe_on_bounded
from adk_rx.rx.overflow import BufferOverflow, Overflow
from adk_rx.rx.schedulers import io_scheduler, runtime_loop, set_io_scheduler, timer_scheduler
from adk_rx.rx.serialize import SerializedSubject, serialize
from adk_rx.rx.subscribe_on import subscribe_on_eager
from adk_rx.rx.watched import Outcome, Watcher, watched
from adk_rx.rx.with_sink import with_sink

__all__ = [
    "BufferOverflow",
    "Bulkhead",
    "Emitter",
    "Outcome",
    "Overflow",
    "SerializedSubject",
    "Watcher",
    "completable",
    "expand",
    "from_async",
    "from_blocking",
    "from_blocking_iterable",
    "from_emitter",
    "io_scheduler",
    "maybe",
    "observe_on_bounded",
    "on_backpressure_buffer",
    "on_backpressure_drop",
    "on_backpressure_latest",
    "runtime_loop",
    "serialize",
    "set_io_scheduler",
    "single",
    "subscribe_on_eager",
    "timer_scheduler",
    "to_async_iterable",
    "to_iterable",
    "watched",
    "with_sink",
]
