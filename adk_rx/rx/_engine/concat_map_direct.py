"""``concat_map_direct``: ``concat_map`` that takes an answer already here without subscribing.

Streaming sends thousands of events through the LLM loop and the Runner, and almost all of
them need no asynchronous work (a partial chunk is emitted as it is). Stock ``concat_map``
subscribes an inner Observable per item and queues them in ``merge``; here a mapper's
:class:`~adk_rx.rx._engine.sync.SyncObservable` (``sync.just(x)``, a store that appended at
once) has its items emitted as plain calls, and only an Observable with real work (a tool
call, a store append on another thread) is subscribed. Order is kept: an item waits while an
earlier inner runs.

Marble diagram::

    source:               --a-----b-----------c--|
    mapper(a) = just(a')  --a'
    mapper(b) = inner     -------b1---b2|            (c waits for the inner to complete)
    mapper(c) = just(c')
    concat_map_direct:    --a'----b1---b2-----c'-|

An item that needs no work goes through as a plain call, with no SyncObservable, lock or
queue, while nothing earlier is pending: an item of type ``passes`` is emitted as it is, and
``direct(item)`` gives an item's one output (what ``mapper(item)`` would emit) or None when
it needs the mapper (a streamed chunk on its way through)::

    direct(a) = a', direct(b) = None
    source:               --a-----b----c--|
    mapper(b) = inner     -------b1---b2|      (c waits: direct is not asked for it)
    concat_map_direct:    --a'----b1---b2-c'--|

With ``drain_on=E``, an error of type E from the source ends it like a completion would, the
items already queued are still mapped in order, and then the error is passed on::

    source:               --a--b--X(E)
    mapper(a) = inner     ---a1-------a2|
    concat_map_direct:    ---a1-------a2--b'--X(E)
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import AwaitableObservable, count_as_awaitable
from adk_rx.rx._engine.inner import INNERS
from adk_rx.rx._engine.settle import Continued
from adk_rx.rx._engine.slots import Slot
from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["ConcatMapDirect", "concat_map_direct", "concat_map_sink"]

T = TypeVar("T")
R = TypeVar("R")


# What a sink's queue is until an item has to wait: shared and never appended to, so a sink
# whose items never wait (most: a run waiting on its model keeps two) makes no deque.
_NO_QUEUE: deque[Any] = deque()


class _Sink(abc.DisposableBase, Generic[T, R]):
    """The state of one subscription, and its handle; every method may be called from any
    thread. Disposing it stops the sink first, then its upstream and its inner."""

    __slots__ = (
        "_busy",
        "_direct",
        "_done",
        "_drain_on",
        "_held",
        "_inner",
        "_lock",
        "_map_error",
        "_mapper",
        "_observer",
        "_on_arrival",
        "_passes",
        "_queue",
        "_scheduler",
        "_stopped",
        "upstream",
    )

    def __init__(
        self,
        observer: abc.ObserverBase[R],
        mapper: Callable[[T], Observable[R]],
        on_arrival: Callable[[T], None] | None,
        scheduler: abc.SchedulerBase | None,
        drain_on: type[Exception] | None = None,
        direct: Callable[[T], R | None] | None = None,
        passes: type[Any] | None = None,
        map_error: Callable[[Exception], Exception] | None = None,
    ) -> None:
        self._observer = observer
        self._map_error = map_error
        self._direct = direct
        self._passes = passes
        self._drain_on = drain_on
        self._held: Exception | None = None  # a drain_on error, passed on once drained
        self._mapper = mapper
        self._on_arrival = on_arrival
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._queue: deque[T] = _NO_QUEUE  # its own deque is made when an item first waits
        self._busy = False  # an item is being mapped, emitted, or its inner runs
        self._done = False  # the source completed
        self._stopped = False  # errored or disposed
        self._inner = Slot()
        self.upstream = Slot()

    def on_next(self, item: T) -> None:
        if self._stopped:
            return  # disposed or failed: a late item must not even reach on_arrival
        if not self._busy:
            # Idle: only the source (this call) makes it busy, and no other thread works on
            # it, so no lock is needed to take it.
            if type(item) is self._passes:
                out: Any = item
            elif self._direct is not None:
                out = self._direct(item)
            else:
                out = None
            if out is not None:
                self._busy = True  # an item the subscriber sends back meanwhile is queued
                self._observer.on_next(out)
                if self._queue or self._done:  # something came meanwhile: drain it
                    self._resume()
                else:
                    self._busy = False
                return
        if self._on_arrival is not None:
            self._on_arrival(item)
        with self._lock:
            if self._stopped:
                return
            if self._busy:
                queue = self._queue
                if queue is _NO_QUEUE:
                    queue = self._queue = deque()
                queue.append(item)
                return
            self._busy = True
        self._drain(item)

    def on_error(self, error: Exception) -> None:
        if self._map_error is not None:
            error = self._map_error(error)
        drain_on = self._drain_on
        if drain_on is None or not isinstance(error, drain_on):
            self._fail(error)
            return
        with self._lock:
            if self._stopped:
                return
            self._held = error
            self._done = True
            if self._busy:
                return  # the drain passes it on once the queue is done
            self._stopped = True
        observer, self._observer = self._observer, _LEFT
        observer.on_error(error)

    def on_completed(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._done = True
            if self._busy:
                return
            self._stopped = True
        observer, self._observer = self._observer, _LEFT
        observer.on_completed()

    def _drain(self, item: T) -> None:
        """Maps items in order while each one is finished synchronously; owns ``_busy``."""
        observer = self._observer
        while True:
            try:
                result = self._mapper(item)
            except Exception as exc:
                self._fail(exc)
                return
            if type(result) is SyncObservable:  # already here: emitted, not subscribed
                try:
                    values = result.items_now()
                except Exception as exc:
                    self._fail(exc)
                    return
                for value in values:
                    if self._stopped:
                        return
                    observer.on_next(value)
            elif not self._subscribe_inner(result):
                return  # the inner's completion resumes the drain
            next_item = self._next_or_idle()
            if next_item is _IDLE:
                return
            item = next_item  # type: ignore[assignment]

    def begin_with(self, inner: Observable[R]) -> None:
        """Busy with ``inner`` (an item's answer already running, as if mapped) before any
        item arrives; called once, by the source, right after the sink is made."""
        self._busy = True
        if self._subscribe_inner(inner):
            self._resume()

    def _subscribe_inner(self, inner: Observable[R]) -> bool:
        """Subscribes ``inner``; True if it already completed (the drain goes on here)."""
        # The handle is in place before the inner runs: a completion on another thread that
        # resumes the drain (and subscribes the next inner) can never be overwritten by it.
        return sync.subscribe_stage(
            inner,
            self._observer.on_next,
            self._fail,
            self._resume,
            self._scheduler,
            into=self._inner,
        )

    def _resume(self) -> None:
        item = self._next_or_idle()
        if item is not _IDLE:
            self._drain(item)  # type: ignore[arg-type]

    def _next_or_idle(self) -> Any:
        with self._lock:
            if self._stopped:
                return _IDLE
            if self._queue:
                return self._queue.popleft()
            self._busy = False
            if not self._done:
                return _IDLE
            self._stopped = True
        held = self._held
        observer, self._observer = self._observer, _LEFT
        if held is not None:
            observer.on_error(held)
        else:
            observer.on_completed()
        return _IDLE

    def _fail(self, error: Exception) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._queue.clear()
        self.dispose()
        observer, self._observer = self._observer, _LEFT
        observer.on_error(error)

    def dispose(self) -> None:
        with self._lock:
            self._stopped = True
            self._queue.clear()
        self.upstream.dispose()
        self._inner.dispose()


_IDLE = object()


class _Left:
    """The observer of a sink that passed its end on: it takes anything, does nothing."""

    __slots__ = ()

    def on_next(self, _: Any) -> None:
        pass

    on_error = on_next

    def on_completed(self) -> None:
        pass


_LEFT: Any = _Left()


def concat_map_direct(
    mapper: Callable[[T], Observable[R]],
    on_arrival: Callable[[T], None] | None = None,
    drain_on: type[Exception] | None = None,
    direct: Callable[[T], R | None] | None = None,
    passes: type[Any] | None = None,
    map_error: Callable[[Exception], Exception] | None = None,
) -> Callable[[Observable[T]], Observable[R]]:
    """Maps each item to an Observable and concatenates them, in order.

    Args:
        mapper: called for an item when every earlier item is done; returns the Observable
            whose items are emitted before the next item's (a SyncObservable's at once).
        on_arrival: called with each item as soon as it arrives, before it waits its turn.
        drain_on: a source error of this type waits for the queued items to be mapped.
        direct: maps an item that needs no work to its one output (None: it needs the
            mapper); on_arrival is not called for an item it maps.
        passes: the type of the items that need no work: the mapper would emit them as
            they are and on_arrival ignores them.
        map_error: what a source error becomes before it is passed on (or drained on).

    Returns:
        The operator.
    """

    def operator(source: Observable[T]) -> Observable[R]:
        return ConcatMapDirect(source, mapper, on_arrival, drain_on, direct, passes, map_error)

    return operator


class ConcatMapDirect(AwaitableObservable[R]):
    """What :func:`concat_map_direct` makes of a source: one object, no subscribe function
    around it; a step's driver drives it with itself as its observer (:meth:`drive`)."""

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self, source: Observable[Any], *args: Any
    ) -> None:
        self._subscribe = None
        self._source = source
        self._args = args  # the sink's: mapper, on_arrival, drain_on, direct, passes, map_error

    def _subscribe_core(
        self, observer: abc.ObserverBase[R], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        mapper, on_arrival, drain_on, direct, passes, map_error = self._args
        sink: _Sink[Any, R] = _Sink(
            observer, mapper, on_arrival, scheduler, drain_on, direct, passes, map_error
        )
        if type(observer) in INNERS:  # the handle known before the upstream runs
            observer.subscription = sink  # pyright: ignore[reportAttributeAccessIssue]
        self._start(sink, scheduler)
        return sink

    def drive(self, target: Any, into: Slot | None) -> None:
        """Subscribes ``target`` (a step's driver) with no observer between the stage and
        it, the sink's handle in ``into`` first: disposing it stops the sink, which drops
        late items itself. The sink lets go of ``target`` once it passed the end on."""
        mapper, on_arrival, drain_on, direct, passes, map_error = self._args
        sink: _Sink[Any, R] = _Sink(
            target, mapper, on_arrival, None, drain_on, direct, passes, map_error
        )
        if into is not None:
            into.disposable = sink
        self._start(sink, None)

    def _start(self, sink: _Sink[Any, R], scheduler: abc.SchedulerBase | None) -> None:
        # Inside a guarded subscribe: the upstream needs no wrapper layer. Its items go
        # straight to the sink, which drops late ones itself (see on_next); an answer
        # already running (a model's on another thread) is taken over by it.
        source = self._source
        if type(source) is Continued:
            source.take_over(sink, sink.on_next, sink.upstream)
        else:
            sync.subscribe_inner(
                source, sink, scheduler=scheduler, relay=sink.on_next, into=sink.upstream
            )


count_as_awaitable(ConcatMapDirect)


def concat_map_sink(
    observer: abc.ObserverBase[R],
    mapper: Callable[[T], Observable[R]],
    first: Observable[R],
    on_arrival: Callable[[T], None] | None = None,
    drain_on: type[Exception] | None = None,
    passes: type[Any] | None = None,
) -> abc.ObserverBase[T] | Any:
    """:func:`concat_map_direct`'s state for a source that calls it itself: an observer
    (and handle) that maps what it is given to ``observer``, first emitting ``first`` (the
    answer, already running, of an item mapped before the sink was made).

    For a driver that ran ahead as plain calls until one item's answer had to wait; the
    arguments are :func:`concat_map_direct`'s.
    """
    sink: _Sink[T, R] = _Sink(observer, mapper, on_arrival, None, drain_on, None, passes)
    sink.begin_with(first)
    return sink
