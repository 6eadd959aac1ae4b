"""``run_process``: a program in its own process group, as a cold, cancellable Single.

The program starts when the Observable is subscribed (on the I/O scheduler), leads a new
session (``start_new_session``), so its pid is the group of everything it spawns. Whatever
ends the run kills that whole group with SIGKILL, before the program is reaped (a group id
cannot be reused while its leader is a zombie):

* the program exits: what it left behind (a background child) dies with it;
* the timeout expires (on the timer scheduler: a ``TestScheduler`` gives virtual time);
* the subscription is disposed: the group is killed and the program reaped before
  ``dispose()`` returns, so its pid is gone when the caller goes on.

Marble diagram::

    run_process(argv):         ---------(outcome)|        the program exited
    timeout t expires:         ----t----(outcome timed_out)|
    dispose() at X:            ----X                      group killed, nothing emitted

stdout and stderr are read as they come and kept up to ``output_limit`` bytes each; the rest
is read and dropped (the program never blocks on a full pipe), and the outcome says so.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.rx.schedulers import io_scheduler, schedule_now, timer_scheduler

__all__ = ["ProcessOutcome", "run_process"]

_CHUNK = 65536
_AFTER_EXIT_GRACE = 1.0  # seconds to wait for pipes held by a child that left the group
_POLL = 0.05  # seconds between exit checks where there is no pidfd


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How a program ended: its output (capped), status, and whether it was stopped.

    Attributes:
        stdout, stderr: the first ``output_limit`` bytes of each.
        returncode: the exit status (negative: the signal that killed it); None if it did
            not start.
        timed_out: the timeout killed it.
        truncated: some output was dropped past the limit.
    """

    stdout: bytes
    stderr: bytes
    returncode: int | None
    timed_out: bool = False
    truncated: bool = False


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float | None,
    output_limit: int,
    timer: abc.SchedulerBase | None = None,
    scheduler: abc.SchedulerBase | None = None,
) -> Observable[ProcessOutcome]:
    """A cold Single of the outcome of running ``argv`` in ``cwd`` with exactly ``env``.

    Args:
        argv: the program and its arguments.
        cwd: its working directory.
        env: its whole environment.
        timeout: seconds before its group is killed (None: no limit).
        output_limit: bytes of stdout and of stderr kept.
        timer: where the timeout runs (the shared timer scheduler by default).
        scheduler: where the program is started and read (the I/O scheduler by default).
    """

    def subscribe(
        observer: abc.ObserverBase[ProcessOutcome], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        run = _Run(argv, cwd, env, timeout, output_limit, timer or timer_scheduler())
        scheduled = schedule_now(scheduler or io_scheduler(), lambda *_: run.work(observer))

        def dispose() -> None:
            scheduled.dispose()
            run.dispose()

        return Disposable(dispose)

    return Observable(subscribe)


class _Run:
    """One subscription's program: started, read, and killed once, under one lock."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        timeout: float | None,
        limit: int,
        timer: abc.SchedulerBase,
    ) -> None:
        self._argv, self._cwd, self._env = list(argv), cwd, dict(env)
        self._timeout, self._limit, self._timer = timeout, limit, timer
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._timer_run: abc.DisposableBase | None = None
        self._disposed = False
        self._finished = False  # the program is about to be reaped: its group is not ours
        self._timed_out = False

    def work(self, observer: abc.ObserverBase[ProcessOutcome]) -> None:
        with self._lock:
            if self._disposed:
                return
            try:
                process = subprocess.Popen(
                    self._argv,
                    cwd=self._cwd,
                    env=self._env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                observer.on_next(ProcessOutcome(b"", str(exc).encode(), None))
                observer.on_completed()
                return
            self._process = process
            if self._timeout is not None:
                self._timer_run = self._timer.schedule_relative(self._timeout, self._expire)
        try:
            stdout, stderr, truncated = self._drain(process)
        finally:
            with self._lock:
                self._kill_group()
                self._finished = True
                if self._timer_run is not None:
                    self._timer_run.dispose()
        returncode = process.wait()
        with self._lock:
            if self._disposed:
                return
            timed_out = self._timed_out
        observer.on_next(ProcessOutcome(stdout, stderr, returncode, timed_out, truncated))
        observer.on_completed()

    def _expire(self, *_: Any) -> None:
        with self._lock:
            if self._finished or self._disposed:
                return
            self._timed_out = True
            self._kill_group()

    def dispose(self) -> None:
        with self._lock:
            if self._disposed:
                return
            self._disposed = True
            if self._timer_run is not None:
                self._timer_run.dispose()
            process = self._process
            if process is None or self._finished:
                return
            self._kill_group()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)  # SIGKILL is prompt; the pid is gone when dispose returns

    def _kill_group(self) -> None:
        """Kills the program's group (called under the lock, before it is reaped)."""
        process = self._process
        if process is None or self._finished:
            return
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)

    def _drain(self, process: subprocess.Popen[bytes]) -> tuple[bytes, bytes, bool]:
        """Reads both pipes until they close; kills the group once the program exited."""
        assert process.stdout is not None and process.stderr is not None
        out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
        kept = {out_fd: bytearray(), err_fd: bytearray()}
        open_pipes = {out_fd, err_fd}
        truncated = exited = False
        exit_fd = _exit_fd(process.pid)
        try:
            with selectors.DefaultSelector() as selector:
                for fd in (out_fd, err_fd) if exit_fd is None else (out_fd, err_fd, exit_fd):
                    selector.register(fd, selectors.EVENT_READ)
                while open_pipes:
                    wait = _AFTER_EXIT_GRACE if exited else (None if exit_fd else _POLL)
                    ready = selector.select(wait)
                    if not ready:
                        if exited:
                            break  # a child that left the group holds the pipes: stop reading
                        exited = process.poll() is not None  # no pidfd: polled
                    for key, _ in ready:
                        if exit_fd is not None and key.fd == exit_fd:
                            selector.unregister(exit_fd)
                            exited = True
                            continue
                        data = os.read(key.fd, _CHUNK)
                        if not data:
                            selector.unregister(key.fd)
                            open_pipes.discard(key.fd)
                            continue
                        room = self._limit - len(kept[key.fd])
                        truncated = truncated or len(data) > room
                        if room > 0:
                            kept[key.fd] += data[:room]
                    if exited:
                        with self._lock:
                            self._kill_group()  # what the program left running dies with it
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
            process.stdout.close()
            process.stderr.close()
        return bytes(kept[out_fd]), bytes(kept[err_fd]), truncated


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux pidfd), else None."""
    open_pidfd = getattr(os, "pidfd_open", None)
    if open_pidfd is None:
        return None
    try:
        return open_pidfd(pid)
    except OSError:
        return None
