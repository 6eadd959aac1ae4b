"""SandboxedCodeExecutor: the model's code in a confined child interpreter.

What it does, for every run:

* **Resources**: its address space (``memory_mb``, ``RLIMIT_AS``: an allocation past it
  fails with ``MemoryError``), its CPU time (``cpu_seconds``, ``RLIMIT_CPU``: SIGXCPU, then
  SIGKILL a second later), the size of any file it writes (``file_size_mb``), open files
  (256), no core dumps; set before the code starts, soft and hard, so it cannot raise them.
* **Time**: ``timeout`` of wall-clock time, then its process group is killed; disposing the
  run (the invocation cancelled) kills it the same way.
* **Files**: a fresh private directory as its working directory, HOME and TMPDIR, removed
  after the run; only the files it leaves there come back (as artifacts).
* **Environment**: only PATH, HOME, TMPDIR and LANG; none of this process's variables (API
  keys, tokens), and the interpreter runs isolated (``-I``: no PYTHONPATH, no user site).
* **Network** (``network=False``, the default): a network namespace of its own
  (``unshare``), with no interface up: nothing, not even this machine's 127.0.0.1, is
  reachable. Where the OS does not allow one, the executor is refused at construction
  (:class:`~adk_rx.errors.SandboxUnavailableError`), never run with the network.
* **Output**: stdout and stderr capped at ``output_limit`` bytes each.

What it does not protect against (the threat model): it is not a security boundary against a
determined attacker. The code runs as this process's user, so it can **read any file** that
user can read and write any it can write outside its directory (there is no filesystem
namespace or chroot); it shares the kernel (a kernel exploit escapes it); the number of
processes it forks is not limited (a fork bomb runs until the timeout or CPU limit ends its
group); CPU and memory are per process, so children each get their own. Use it to keep a
model's honest mistakes (an endless loop, a huge allocation, a stray request, a leaked
secret in the environment) from hurting the host; for untrusted code from strangers, run the
agent itself in a container or VM.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from adk_rx.code_executors.isolation import network_isolation
from adk_rx.code_executors.kernel import Kernels
from adk_rx.code_executors.local import DEFAULT_OUTPUT_LIMIT, ChildProcessExecutor, check_timeout
from adk_rx.code_executors.workdir import RunDirectory
from adk_rx.errors import ConfigurationError, SandboxUnavailableError

if TYPE_CHECKING:
    pass

__all__ = ["SandboxedCodeExecutor"]

_MB = 1024 * 1024
_OPEN_FILES = 256


def _positive(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise ConfigurationError(f"{name} must be > 0 or None, got {value!r}")


class SandboxedCodeExecutor(ChildProcessExecutor):
    """Runs the model's code in a child interpreter with resource limits and no network.

    See the module docstring for what it protects against and what it does not.

    Args:
        timeout: seconds of wall-clock time one run may take (None: no limit).
        memory_mb: its address space in MiB (None: no limit).
        cpu_seconds: its CPU time in seconds (None: no limit).
        network: False (the default) gives it no network at all; True leaves the host's.
        file_size_mb: the largest file it may write, in MiB.
        output_limit: bytes of stdout and of stderr kept.
        error_retry_attempts, code_block_delimiters, execution_result_delimiters: as in
            :class:`~adk_rx.code_executors.BaseCodeExecutor` (None: its defaults).

    Raises:
        SandboxUnavailableError: ``network=False`` on a machine that cannot make a network
            namespace (the message says why; pass ``network=True`` to run with the network).
    """

    def __init__(
        self,
        *,
        timeout: float | None = 30,
        memory_mb: int | None = 512,
        cpu_seconds: int | None = 30,
        network: bool = False,
        file_size_mb: int = 64,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        error_retry_attempts: int = 2,
        code_block_delimiters: Sequence[tuple[str, str]] | None = None,
        execution_result_delimiters: tuple[str, str] | None = None,
        stateful: bool = False,
        idle_timeout: float | None = 600,
    ) -> None:
        check_timeout(timeout)
        check_timeout(idle_timeout)
        _positive("memory_mb", memory_mb)
        _positive("cpu_seconds", cpu_seconds)
        _positive("file_size_mb", file_size_mb)
        _positive("output_limit", output_limit)
        prefix: tuple[str, ...] = ()
        if not network:
            found, why = network_isolation()
            if found is None:
                raise SandboxUnavailableError(
                    f"SandboxedCodeExecutor(network=False) needs a network namespace, which "
                    f"this machine does not allow: {why}. Pass network=True to run code with "
                    "the host's network, or run the agent in a container without one."
                )
            prefix = found
        delimiters: dict[str, Any] = {}
        if code_block_delimiters is not None:
            delimiters["code_block_delimiters"] = code_block_delimiters
        if execution_result_delimiters is not None:
            delimiters["execution_result_delimiters"] = execution_result_delimiters
        super().__init__(stateful=stateful, error_retry_attempts=error_retry_attempts, **delimiters)
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.cpu_seconds = cpu_seconds
        self.network = network
        self.file_size_mb = file_size_mb
        self.output_limit = output_limit
        self._prefix = prefix
        argv = [*prefix, sys.executable, "-I"]
        self.kernels = Kernels(argv, _scrubbed_env, self._limits(), idle_timeout)

    def _limits(self) -> dict[str, tuple[int, int]]:
        limits = {
            "RLIMIT_FSIZE": (self.file_size_mb * _MB,) * 2,
            "RLIMIT_NOFILE": (_OPEN_FILES, _OPEN_FILES),
            "RLIMIT_CORE": (0, 0),
        }
        if self.memory_mb is not None:
            limits["RLIMIT_AS"] = (self.memory_mb * _MB,) * 2
        if self.cpu_seconds is not None:
            # SIGXCPU at the soft limit (its result says why), SIGKILL a second later.
            limits["RLIMIT_CPU"] = (self.cpu_seconds, self.cpu_seconds + 1)
        return limits

    def _child_env(self, directory: RunDirectory) -> dict[str, str]:
        return _scrubbed_env(directory)

    def _program_options(self) -> dict[str, Any]:
        return {"prefix": self._prefix, "python_flags": ("-I",), "limits": self._limits()}


def _scrubbed_env(directory: RunDirectory) -> dict[str, str]:
    return {
        "PATH": os.defpath,
        "HOME": str(directory.work),
        "TMPDIR": str(directory.tmp),
        "LANG": "C.UTF-8",
    }
