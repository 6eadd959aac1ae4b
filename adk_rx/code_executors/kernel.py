"""Stateful runs: one long-lived interpreter per session (``execution_id``), its variables
kept from one run to the next.

A kernel is a child interpreter (in its own process group, under the executor's limits and
namespaces) in a private directory that lives as long as it does. Each run: the input files
and the program are written to the directory, the program's path is sent on the kernel's
request pipe, and the kernel runs it in its one globals dict with fd 1 and 2 pointed at fresh
files (so what the code's own children print is caught too), then writes the status on its
result pipe. Runs of one kernel take turns.

    run 1: x = 6         -> kernel k1 (globals: x)
    run 2: print(x * 7)  -> kernel k1 -> "42"
    timeout / dispose    -> k1's group SIGKILLed, its directory removed
    run 3: print(x)      -> kernel k2 (fresh): NameError

A kernel is killed by the run's timeout or disposal (its variables are lost; the result says
so), by ``idle_timeout`` seconds without a run, by the executor's ``close()``, and it ends by
itself when this process dies (its request pipe closes). CPU and memory limits count over the
kernel's whole life.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.code_executors.process import ProcessOutcome
from adk_rx.code_executors.program import result_of
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult
from adk_rx.code_executors.workdir import RunDirectory
from adk_rx.rx.schedulers import io_scheduler, schedule_now, timer_scheduler

__all__ = ["KERNEL", "Kernels"]

KERNEL = """
import json, os, sys, traceback
_requests, _results, _limits = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
del sys.argv[1:]
os.set_inheritable(_requests, False)  # the code's own children never hold the pipes
os.set_inheritable(_results, False)
if _limits:
    import resource
    for _name, (_soft, _hard) in json.loads(_limits).items():
        resource.setrlimit(getattr(resource, _name), (_soft, _hard))
for _stream in (sys.stdout, sys.stderr):
    _stream.reconfigure(encoding="utf-8", errors="backslashreplace")
_globals = {"__name__": "__main__"}
_root = os.path.dirname(os.getcwd())
with os.fdopen(_requests, encoding="utf-8") as _lines:
    for _line in _lines:
        _status = 0
        _saved = os.dup(1), os.dup(2)
        for _fd, _name in ((1, "stdout"), (2, "stderr")):
            _file = os.open(os.path.join(_root, _name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(_file, _fd)
            os.close(_file)
        try:
            with open(_line.rstrip("\\n"), encoding="utf-8") as _file:
                exec(compile(_file.read(), "<code>", "exec"), _globals, _globals)
        except SystemExit as _exit:
            _status = _exit.code if isinstance(_exit.code, int) else 0 if _exit.code is None else 1
            if not isinstance(_exit.code, int | None):
                print(_exit.code, file=sys.stderr)
        except BaseException as _exc:
            _tb = _exc.__traceback__
            traceback.print_exception(type(_exc), _exc, _tb.tb_next if _tb else None)
            _status = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for _fd, _old in zip((1, 2), _saved):
                os.dup2(_old, _fd)
                os.close(_old)
        os.write(_results, f"{_status}\\n".encode())
"""

_RESTARTED = " The interpreter was restarted: variables from earlier runs are gone."


class _Kernel:
    """One interpreter, its pipes and its directory; killed once."""

    def __init__(self, argv: Sequence[str], env: Callable[[RunDirectory], Mapping[str, str]],
                 limits: str) -> None:  # fmt: skip
        self.directory = RunDirectory()
        request_read, request_write = os.pipe()
        result_read, result_write = os.pipe()
        try:
            self.process = subprocess.Popen(
                [*argv, "-c", KERNEL, str(request_read), str(result_write), limits],
                cwd=self.directory.work,
                env=dict(env(self.directory)),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(request_read, result_write),
                start_new_session=True,
            )
        except BaseException:
            for fd in (request_read, request_write, result_read, result_write):
                os.close(fd)
            self.directory.dispose()
            raise
        os.close(request_read)
        os.close(result_write)
        self._requests = request_write
        self._results = result_read
        self._fds: tuple[int, ...] = (request_write, result_read)
        self._lock = threading.Lock()
        self.turn = threading.Lock()  # one run at a time
        self.killed = False

    def run(self, path: str) -> int | None:
        """Sends one program; its status, or None when the kernel died before answering."""
        try:
            os.write(self._requests, f"{path}\n".encode())
        except OSError:
            return None
        answer = b""
        while not answer.endswith(b"\n"):
            ready, _, _ = select.select([self._results], [], [])
            if not ready:
                continue
            chunk = os.read(self._results, 64)
            if not chunk:
                return None  # the kernel died (killed, or its code called os._exit)
            answer += chunk
        try:
            return int(answer)
        except ValueError:  # the code wrote on the kernel's pipe: not a kernel to trust
            self.kill()
            return None

    def kill(self) -> int | None:
        """Kills the kernel's group (once) and reaps it; its status. Any thread may call it:
        the pipes stay open for the run that may be reading them (see :meth:`end`)."""
        with self._lock:
            if not self.killed:
                self.killed = True
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def end(self) -> None:
        """Kills it, closes its pipes and removes its directory (no run may be using it)."""
        self.kill()
        with self._lock:
            fds, self._fds = self._fds, ()
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.directory.dispose()


class Kernels:
    """The kernels of one executor, by execution id."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Callable[[RunDirectory], Mapping[str, str]],
        limits: Mapping[str, tuple[int, int]],
        idle_timeout: float | None,
    ) -> None:
        self._argv = list(argv)
        self._env = env
        self._limits = json.dumps(dict(limits)) if limits else ""
        self._idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._kernels: dict[str, _Kernel] = {}
        self._idle: dict[str, abc.DisposableBase] = {}

    def pids(self) -> dict[str, int]:
        """The pid of each live kernel, by execution id."""
        with self._lock:
            return {key: k.process.pid for key, k in self._kernels.items()}

    def close(self) -> None:
        """Kills every kernel."""
        with self._lock:
            kernels = list(self._kernels.values())
            self._kernels.clear()
            for idle in self._idle.values():
                idle.dispose()
            self._idle.clear()
        for kernel in kernels:
            kernel.kill()
            if kernel.turn.acquire(blocking=False):  # no run is reading its pipes: end it here
                try:
                    kernel.end()
                finally:
                    kernel.turn.release()
            # else the run that holds it sees it dead and ends it

    def _take(self, key: str) -> _Kernel:
        with self._lock:
            idle = self._idle.pop(key, None)
            if idle is not None:
                idle.dispose()
            kernel = self._kernels.get(key)
            if kernel is None or kernel.killed:
                kernel = self._kernels[key] = _Kernel(self._argv, self._env, self._limits)
            return kernel

    def _forget(self, key: str, kernel: _Kernel) -> None:
        with self._lock:
            if self._kernels.get(key) is kernel:
                del self._kernels[key]
        kernel.end()

    def _rest(self, key: str, kernel: _Kernel, timer: abc.SchedulerBase) -> None:
        """Schedules the kernel's end after ``idle_timeout`` without a run."""
        if self._idle_timeout is None:
            return

        def expire(*_: Any) -> None:
            with self._lock:
                if self._idle.get(key) is not scheduled[0] or self._kernels.get(key) is not kernel:
                    return
                del self._idle[key]
                del self._kernels[key]
            kernel.end()

        scheduled: list[abc.DisposableBase] = []
        with self._lock:
            if self._kernels.get(key) is not kernel:
                return
            scheduled.append(timer.schedule_relative(self._idle_timeout, expire))
            self._idle[key] = scheduled[0]

    def run(
        self,
        key: str,
        code_input: CodeExecutionInput,
        *,
        timeout: float | None,
        output_limit: int,
        timer: abc.SchedulerBase | None,
        scheduler: abc.SchedulerBase | None = None,
    ) -> Observable[CodeExecutionResult]:
        """A cold Single: ``code_input`` run in the kernel of ``key`` (started if needed).
        The timeout and disposal kill the kernel."""
        clock = timer or timer_scheduler()

        def subscribe(
            observer: abc.ObserverBase[CodeExecutionResult], _: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            guard = threading.Lock()
            state: dict[str, Any] = {"disposed": False, "timed_out": False, "kernel": None}

            def kill_for(reason: str) -> None:
                with guard:
                    kernel = state["kernel"]
                    if reason == "disposed":
                        state["disposed"] = True
                    elif kernel is not None and not state["disposed"]:
                        state["timed_out"] = True
                if kernel is not None:
                    kernel.kill()

            def work(*_: Any) -> None:
                with guard:
                    if state["disposed"]:
                        return
                try:
                    kernel = self._take(key)
                except OSError as exc:
                    observer.on_next(
                        CodeExecutionResult(stderr=f"Code execution could not start: {exc}")
                    )
                    observer.on_completed()
                    return
                with kernel.turn:
                    with guard:
                        if state["disposed"]:
                            return
                        state["kernel"] = kernel
                    expiry = (
                        clock.schedule_relative(timeout, lambda *_: kill_for("timeout"))
                        if timeout is not None
                        else None
                    )
                    try:
                        result = self._run_once(kernel, code_input, timeout, output_limit, state)
                    finally:
                        if expiry is not None:
                            expiry.dispose()
                        with guard:
                            state["kernel"] = None  # done: disposing now leaves it running
                if kernel.killed:
                    self._forget(key, kernel)
                else:
                    self._rest(key, kernel, clock)
                with guard:
                    if state["disposed"]:
                        return
                observer.on_next(result)
                observer.on_completed()

            scheduled = schedule_now(scheduler or io_scheduler(), work)

            def dispose() -> None:
                scheduled.dispose()
                kill_for("disposed")

            return Disposable(dispose)

        return Observable(subscribe)

    def _run_once(
        self,
        kernel: _Kernel,
        code_input: CodeExecutionInput,
        timeout: float | None,
        limit: int,
        state: dict[str, Any],
    ) -> CodeExecutionResult:
        directory = kernel.directory
        before = directory.prepare(code_input.code, code_input.input_files)
        status = kernel.run(str(directory.program))
        stdout, out_cut = _read(directory.root / "stdout", limit)
        stderr, err_cut = _read(directory.root / "stderr", limit)
        if status is None:  # it died: its files go with it
            code = kernel.kill()
            outcome = ProcessOutcome(stdout, stderr, code, state["timed_out"], out_cut or err_cut)
            result = result_of(outcome, (), timeout, limit)
            return dataclasses.replace(result, stderr=result.stderr + _RESTARTED)
        outcome = ProcessOutcome(stdout, stderr, status, False, out_cut or err_cut)
        return result_of(outcome, directory.output_files(before), timeout, limit)


def _read(path: Any, limit: int) -> tuple[bytes, bool]:
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError:
        return b"", False
    return data[:limit], len(data) > limit
