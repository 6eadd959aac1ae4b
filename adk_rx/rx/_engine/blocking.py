"""``Blocking``: a blocking call run on a pool, and what follows it there in the same job.

:func:`~adk_rx.rx.from_blocking` returns one. A step that maps the call's result, recovers
from its error (:meth:`Blocking.first_or_recover`) or turns its result into items
(:meth:`Blocking.each_of`) would otherwise subscribe a layer of its own around it, and each
layer's functions ran on the worker anyway, as the result came. Here they are run by the job
itself, in the same order, with the same outcome::

    call:                                ----(fn() on a worker)--r|
    .first_or_recover(m, rec):           ----m(r)|        (fn or m raises e: rec(e)'s items)
    .first_or_recover(m, rec).each_of(f): ----f(m(r))...| (f raises e: #e)

A cancel before the job started keeps it from running; during the call, its outcome is
dropped; once a recovery runs, the cancel disposes it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.scheduler import ThreadPoolScheduler

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.awaitable import LATER_KINDS, LaterObservable
from adk_rx.rx._engine.collected import each_of
from adk_rx.rx._engine.first_or_recover import first_or_recover
from adk_rx.rx._engine.slots import Slot
from adk_rx.rx.schedulers import io_scheduler, schedule_now

__all__ = ["Blocking"]

T = TypeVar("T")
R = TypeVar("R")


class Blocking(LaterObservable[T]):
    """A cold Single of ``fn()`` run on ``scheduler`` (the shared I/O pool when None).

    Args:
        fn: the blocking call.
        scheduler: where it runs.
        mapper, recover: set by :meth:`first_or_recover`.
        each: set by :meth:`each_of`.
    """

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self,
        fn: Callable[[], Any],
        scheduler: abc.SchedulerBase | None = None,
        mapper: Callable[[Any], Any] | None = None,
        recover: Callable[[Exception], Observable[Any]] | None = None,
        each: Callable[[Any], list[Any]] | None = None,
    ) -> None:
        self._subscribe = None
        self._fn = fn
        self._scheduler = scheduler
        self._mapper = mapper
        self._recover = recover
        self._each = each

    def first_or_recover(
        self, mapper: Callable[[Any], R], recover: Callable[[Exception], Observable[R]]
    ) -> Observable[R]:
        """:func:`~adk_rx.rx._engine.first_or_recover.first_or_recover` of this call, run
        by its job (by a layer of its own when it maps its result already)."""
        if self._mapper is not None or self._recover is not None or self._each is not None:
            return first_or_recover(lambda: self, mapper, recover)
        return Blocking(self._fn, self._scheduler, mapper, recover)

    def each_of(self, fn: Callable[[Any], list[Any]]) -> Observable[Any]:
        """:func:`~adk_rx.rx._engine.collected.each_of` of this call, run by its job (by a
        layer of its own when it has one already)."""
        if self._each is not None:
            return each_of(self, fn)
        return Blocking(self._fn, self._scheduler, self._mapper, self._recover, fn)

    def _subscribe_core(
        self, observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        call = _BlockingCall(self, observer)
        pool = self._scheduler or io_scheduler()
        if type(pool) is ThreadPoolScheduler:  # (schedule_now's, inline, with no handle)
            run = contextvars.copy_context().run
            call.future = pool.executor.submit(run, call.work, pool, None)
        else:
            call.scheduled = schedule_now(pool, call.work)
        return call


class _BlockingCall(abc.DisposableBase):
    """One subscription of a :class:`Blocking`: the job, its observer, and its cancel.

    A flag read and written under the GIL is all a cancel needs (a call being run is not
    stopped, only its outcome dropped).
    """

    __slots__ = ("cancelled", "future", "observer", "recovery", "scheduled", "source")

    def __init__(self, source: Blocking[Any], observer: abc.ObserverBase[Any]) -> None:
        self.source: Blocking[Any] | None = source
        self.observer: abc.ObserverBase[Any] | None = observer
        self.cancelled = False
        self.scheduled: abc.DisposableBase | None = None
        self.future: Future[Any] | None = None  # on a thread pool, instead of scheduled
        self.recovery: Slot | None = None

    def work(self, _: abc.SchedulerBase, __: Any = None) -> None:
        # Running: there is nothing left to cancel (the dispose that follows the end would
        # cancel a job already done: a lock taken and released for nothing).
        self.scheduled = self.future = None
        observer, source = self.observer, self.source
        # Let go of both: the subscription chain holds this call as its disposable, and the
        # observer reaches back to that chain, a cycle that would wait for the cyclic GC.
        self.observer = self.source = None
        if self.cancelled or observer is None or source is None:
            return
        try:
            value = source._fn()  # pyright: ignore[reportPrivateUsage]
            mapper = source._mapper  # pyright: ignore[reportPrivateUsage]
            if mapper is not None and not self.cancelled:
                value = mapper(value)
        except Exception as exc:
            if not self.cancelled:
                self._failed(source, observer, exc)
            return
        if self.cancelled:
            return
        each = source._each  # pyright: ignore[reportPrivateUsage]
        if each is None:
            observer.on_next(value)
        else:
            try:
                made = each(value)
            except Exception as exc:
                observer.on_error(exc)
                return
            for one in made:
                observer.on_next(one)
        observer.on_completed()

    def _failed(
        self, source: Blocking[Any], observer: abc.ObserverBase[Any], exc: Exception
    ) -> None:
        recover = source._recover  # pyright: ignore[reportPrivateUsage]
        if recover is None:
            observer.on_error(exc)
            return
        try:
            fallback = recover(exc)
        except Exception as error:
            observer.on_error(error)
            return
        each = source._each  # pyright: ignore[reportPrivateUsage]
        if each is not None:
            fallback = each_of(fallback, each)
        recovery = self.recovery = Slot()
        if self.cancelled:  # a cancel that missed the slot (it reads it after its flag)
            recovery.dispose()
        sync.subscribe_inner(fallback, observer, into=recovery)

    def dispose(self) -> None:
        self.cancelled = True
        self.observer = self.source = None
        scheduled, future = self.scheduled, self.future
        if scheduled is not None:
            scheduled.dispose()
        if future is not None:
            future.cancel()
        recovery = self.recovery
        if recovery is not None:
            recovery.dispose()


LATER_KINDS.add(Blocking)
