"""The process-wide schedulers and the runtime asyncio loop of adk_rx.

Three shared resources, each created lazily and thread-safely on first use:

* :func:`io_scheduler`: a ``ThreadPoolScheduler`` for blocking work (sync tools, sync model
  clients, sqlite). Its size comes from ``ADK_RX_IO_WORKERS`` (default 32).
* :func:`timer_scheduler`: one ``EventLoopScheduler`` thread that runs every timeout and retry
  delay, so a timer never costs a thread of its own.
* :func:`runtime_loop`: the asyncio loop that runs coroutines and async generators: the caller's
  running loop if there is one, otherwise one background loop thread owned by adk_rx.

Work handed to another thread runs in a copy of the ``contextvars`` context of the code that
scheduled it (:func:`schedule_now` and the timer), so OpenTelemetry's current span and any
user context variable are the same inside a tool, a model stream or a store call as where it
was started. asyncio already does this for ``call_soon_threadsafe`` and ``create_task``.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from reactivex import abc, typing
from reactivex.disposable import Disposable
from reactivex.scheduler import EventLoopScheduler, ThreadPoolScheduler

__all__ = ["io_scheduler", "runtime_loop", "set_io_scheduler", "timer_scheduler"]

_TState = TypeVar("_TState")

_log = logging.getLogger(__name__)

_DEFAULT_IO_WORKERS = 32

_lock = threading.Lock()
_io: ThreadPoolScheduler | None = None
_timer: EventLoopScheduler | None = None
_loop: asyncio.AbstractEventLoop | None = None


def _io_workers() -> int:
    raw = os.environ.get("ADK_RX_IO_WORKERS", "")
    try:
        workers = int(raw) if raw.strip() else _DEFAULT_IO_WORKERS
    except ValueError:
        _log.warning("ADK_RX_IO_WORKERS=%r is not an integer; using %d", raw, _DEFAULT_IO_WORKERS)
        return _DEFAULT_IO_WORKERS
    return max(1, workers)


def io_scheduler() -> ThreadPoolScheduler:
    """Returns the shared scheduler for blocking work.

    The pool is created on first use with ``ADK_RX_IO_WORKERS`` threads (default 32). Under
    the GIL, CPU-bound work gains nothing from it; use it for work that waits.
    """
    global _io
    scheduler = _io
    if scheduler is None:
        with _lock:
            if _io is None:
                _io = ThreadPoolScheduler(max_workers=_io_workers())
            scheduler = _io
    return scheduler


def set_io_scheduler(scheduler: ThreadPoolScheduler) -> None:
    """Replaces the shared I/O scheduler for work scheduled from now on.

    Work already running on the previous pool finishes there; the previous pool is not shut
    down, because the caller may still own it.

    Args:
        scheduler: the pool that :func:`io_scheduler` returns from now on.
    """
    global _io
    with _lock:
        _io = scheduler


class _SurvivingEventLoopScheduler(EventLoopScheduler):
    """An ``EventLoopScheduler`` whose thread survives an action that raises, and that lets
    go of a cancelled action at once.

    A stock ``EventLoopScheduler`` thread dies on the first exception and every later action
    is silently never run. A shared timer thread cannot afford that: one faulty callback would
    stop every timeout in the process, so the exception is logged instead.

    A stock cancel only marks the item: it stays queued, holding its action and all the
    action reaches, until its due time. A run's deadline, cancelled when the run ends, kept
    each finished run of the api-server (300 s deadline) in memory for five minutes: RSS grew
    about 17 KB a turn. Here a cancel drops the action at once, and cancelled items are swept
    out of the queue whenever they may make up half of it (amortized O(1) per cancel).
    """

    def __init__(self, thread_factory: typing.StartableFactory | None = None) -> None:
        super().__init__(thread_factory=thread_factory)
        self._cancels_since_sweep = 0

    def schedule_absolute(
        self,
        duetime: typing.AbsoluteTime,
        action: typing.ScheduledAction[_TState],
        state: _TState | None = None,
    ) -> abc.DisposableBase:
        # The action runs in the context it was scheduled from; the cell is emptied on cancel.
        held: list[tuple[contextvars.Context, typing.ScheduledAction[_TState], Any] | None] = [
            (contextvars.copy_context(), action, state)
        ]

        def guarded(scheduler: abc.SchedulerBase, _: Any) -> Any:
            entry = held[0]
            if entry is None:  # cancelled while the thread was picking it up
                return None
            context, action_, state_ = entry
            try:
                return context.run(action_, scheduler, state_)
            except Exception:
                _log.exception("an action on the adk_rx timer scheduler raised")
                return None

        item = super().schedule_absolute(duetime, guarded)

        def cancel() -> None:
            item.dispose()
            held[0] = None
            self._sweep_when_mostly_cancelled()

        return Disposable(cancel)

    def _sweep_when_mostly_cancelled(self) -> None:
        with self._condition:
            self._cancels_since_sweep += 1
            queue = self._queue
            if 2 * self._cancels_since_sweep < len(queue):
                return
            self._cancels_since_sweep = 0
            queue.items = [entry for entry in queue.items if not entry[0].is_cancelled()]
            heapq.heapify(queue.items)


def _timer_thread(target: typing.StartableTarget) -> threading.Thread:
    return threading.Thread(target=target, name="adk_rx-timer", daemon=True)


def timer_scheduler() -> abc.SchedulerBase:
    """Returns the shared single-thread scheduler for timeouts and delays.

    One daemon thread serves every timer in the process; the thread starts with the first
    scheduled action. Actions must be short: they share the thread.
    """
    global _timer
    scheduler = _timer
    if scheduler is None:
        with _lock:
            if _timer is None:
                _timer = _SurvivingEventLoopScheduler(thread_factory=_timer_thread)
            scheduler = _timer
    return scheduler


def _start_background_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()

    threading.Thread(target=run, name="adk_rx-loop", daemon=True).start()
    # Wait until the loop runs so that the first call_soon_threadsafe is never lost.
    started.wait()
    return loop


def runtime_loop() -> asyncio.AbstractEventLoop:
    """Returns the asyncio loop that adk_rx runs coroutines on, as seen from this thread.

    If the calling thread runs an event loop, that loop is returned, so coroutines started
    from asyncio code stay on the caller's loop. Otherwise the result is one background loop
    in a daemon thread owned by adk_rx, started on first use.
    """
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    global _loop
    loop = _loop
    if loop is None:
        with _lock:
            if _loop is None:
                _loop = _start_background_loop()
            loop = _loop
    return loop


class _Submitted(abc.DisposableBase):
    """Cancels an action handed to an executor, if it has not started (no lock needed:
    ``Future.cancel`` takes the future's own)."""

    __slots__ = ("_future",)

    def __init__(self, future: Future[Any]) -> None:
        self._future = future

    def dispose(self) -> None:
        self._future.cancel()


def schedule_now(
    scheduler: abc.SchedulerBase, action: Callable[[abc.SchedulerBase, Any], None]
) -> abc.DisposableBase:
    """Schedules ``action`` to run as soon as possible; disposing cancels it if not started.

    On a ``ThreadPoolScheduler`` the action goes straight to its executor: the stock
    ``schedule`` builds a one-shot ``EventLoopScheduler`` (thread condition, queues) per action,
    which costs more than the blocking call it carries when tools and stores are fast.

    The action runs in a copy of the caller's ``contextvars`` context (OpenTelemetry's current
    span among them), whichever thread runs it.
    """
    context = contextvars.copy_context()
    if isinstance(scheduler, ThreadPoolScheduler):
        return _Submitted(scheduler.executor.submit(context.run, action, scheduler, None))

    def in_context(scheduler_: abc.SchedulerBase, state: Any = None) -> None:
        context.run(action, scheduler_, state)

    return scheduler.schedule(in_context)
