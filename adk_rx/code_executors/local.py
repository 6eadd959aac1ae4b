"""UnsafeLocalCodeExecutor: the model's code in a child of this interpreter, unconfined."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.code_executors.base import BaseCodeExecutor
from adk_rx.code_executors.kernel import Kernels
from adk_rx.code_executors.program import run_program
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult
from adk_rx.code_executors.workdir import RunDirectory
from adk_rx.errors import ConfigurationError

if TYPE_CHECKING:
    from adk_rx.context import InvocationContext

__all__ = ["DEFAULT_OUTPUT_LIMIT", "UnsafeLocalCodeExecutor"]

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
"""Bytes of stdout and of stderr kept from one run; the rest is dropped."""


def check_timeout(timeout: float | None) -> None:
    """Refuses a timeout that is not a positive number of seconds."""
    if timeout is not None and not timeout > 0:
        raise ConfigurationError(f"timeout must be > 0 seconds or None, got {timeout!r}")


class ChildProcessExecutor(BaseCodeExecutor):
    """What the local and the sandboxed executors share: a one-shot run is a fresh child
    interpreter (:func:`run_program`), a stateful one a session's kernel; disposal and the
    timeout kill the child's process group.

    A subclass sets ``timeout``, ``output_limit`` and ``kernels`` and says how its children
    start (:meth:`_child_env`, :meth:`_program_options`).
    """

    timeout: float | None
    output_limit: int
    kernels: Kernels

    def _child_env(self, directory: RunDirectory) -> dict[str, str]:
        raise NotImplementedError

    def _program_options(self) -> dict[str, Any]:
        """Extra arguments of :func:`run_program` (prefix, flags, limits)."""
        return {}

    def execute_code(
        self, ctx: InvocationContext, code_input: CodeExecutionInput
    ) -> Observable[CodeExecutionResult]:
        """A cold Single: the code run in a child interpreter; disposal kills its group."""
        if self.stateful and code_input.execution_id is not None:
            return self.kernels.run(
                code_input.execution_id,
                code_input,
                timeout=self.timeout,
                output_limit=self.output_limit,
                timer=ctx.services.timer_scheduler,
                scheduler=ctx.services.io_scheduler,
            )
        return run_program(
            code_input,
            env=self._child_env,
            timeout=self.timeout,
            output_limit=self.output_limit,
            timer=ctx.services.timer_scheduler,
            scheduler=ctx.services.io_scheduler,
            **self._program_options(),
        )

    def close(self) -> None:
        """Kills the stateful interpreters."""
        self.kernels.close()


class UnsafeLocalCodeExecutor(ChildProcessExecutor):
    """Runs the model's code in a child of the current interpreter, with no confinement.

    Unsafe: the code can do whatever this process can (read and write files, use the
    network, read the environment's secrets). Use it for code you would run yourself; use
    :class:`~adk_rx.code_executors.SandboxedCodeExecutor` for anything else.

    Each run is a fresh ``python`` (``sys.executable``, with this process's import path)
    leading its own process group, in a fresh temporary directory holding the input files.
    The timeout, or disposing the run (the invocation cancelled), kills the whole group:
    nothing the code started outlives it.

    With ``stateful=True`` the runs of one session share one interpreter (its variables and
    its directory stay; see :mod:`adk_rx.code_executors.kernel`): a timeout or a disposal
    kills it, and so do ``idle_timeout`` seconds without a run and :meth:`close`.

    Args:
        timeout: seconds one run may take (google-adk's default, 300); None for no limit.
        output_limit: bytes of stdout and of stderr kept.
        error_retry_attempts, code_block_delimiters, execution_result_delimiters: as in
            :class:`~adk_rx.code_executors.BaseCodeExecutor` (None: its defaults).
        stateful: the runs of one session share an interpreter (google-adk's executor
            refuses this; here it is supported).
        idle_timeout: seconds a stateful interpreter is kept without a run (None: until
            :meth:`close`).
    """

    def __init__(
        self,
        *,
        timeout: float | None = 300,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        error_retry_attempts: int = 2,
        code_block_delimiters: Sequence[tuple[str, str]] | None = None,
        execution_result_delimiters: tuple[str, str] | None = None,
        stateful: bool = False,
        idle_timeout: float | None = 600,
    ) -> None:
        check_timeout(timeout)
        check_timeout(idle_timeout)
        if output_limit < 1:
            raise ConfigurationError(f"output_limit must be >= 1 byte, got {output_limit}")
        delimiters: dict[str, Any] = {}
        if code_block_delimiters is not None:
            delimiters["code_block_delimiters"] = code_block_delimiters
        if execution_result_delimiters is not None:
            delimiters["execution_result_delimiters"] = execution_result_delimiters
        super().__init__(stateful=stateful, error_retry_attempts=error_retry_attempts, **delimiters)
        self.timeout = timeout
        self.output_limit = output_limit
        self.kernels = Kernels([sys.executable], _inherited_env, {}, idle_timeout)

    def _child_env(self, directory: RunDirectory) -> dict[str, str]:
        return _inherited_env(directory)


def _inherited_env(directory: RunDirectory) -> dict[str, str]:
    del directory
    env = dict(os.environ)
    # The child finds the modules this process imports (google-adk does the same).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["PYTHONIOENCODING"] = "utf-8"
    return env
