"""Running one program in a child interpreter: the runner, its command line, its result.

The child interpreter runs :data:`RUNNER`, which sets its resource limits (if any), reads
the program from its file and runs it as google-adk's local executor does: under
``__name__ == "__main__"`` only when the code tests for it, and with a traceback that starts
at the program (``<code>``), not at the runner. Its status decides the result, as in
google-adk: 0 is a success (a warning on stderr is dropped), anything else a failure whose
stderr (or, if it said nothing, a sentence on how it ended) the model is shown.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from collections.abc import Callable, Mapping, Sequence

import reactivex as rx
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.code_executors.process import ProcessOutcome, run_process
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult, File
from adk_rx.code_executors.workdir import RunDirectory

__all__ = ["RUNNER", "result_of", "run_program"]

RUNNER = """
import sys, traceback
_path, _run_name, _limits = sys.argv[1:4]
del sys.argv[1:]
if _limits:
    import json, resource
    for _name, (_soft, _hard) in json.loads(_limits).items():
        resource.setrlimit(getattr(resource, _name), (_soft, _hard))
for _stream in (sys.stdout, sys.stderr):
    _stream.reconfigure(encoding="utf-8", errors="backslashreplace")
_globals = {"__name__": _run_name} if _run_name else {}
with open(_path, encoding="utf-8") as _file:
    _source = _file.read()
try:
    exec(compile(_source, "<code>", "exec"), _globals, _globals)
except SystemExit:
    raise
except BaseException as exc:
    _tb = exc.__traceback__
    traceback.print_exception(type(exc), exc, _tb.tb_next if _tb else None, file=sys.stderr)
    sys.exit(1)
"""

_SIGNAL_MEANINGS = {
    signal.SIGXCPU: "its CPU time limit was reached",
    signal.SIGXFSZ: "it wrote a file past the size limit",
}


def _run_name(code: str) -> str:
    return "__main__" if re.search(r"if\s+__name__\s*==\s*['\"]__main__['\"]", code) else ""


def run_program(
    code_input: CodeExecutionInput,
    *,
    env: Callable[[RunDirectory], Mapping[str, str]],
    timeout: float | None,
    output_limit: int,
    timer: abc.SchedulerBase | None,
    scheduler: abc.SchedulerBase | None = None,
    prefix: Sequence[str] = (),
    python_flags: Sequence[str] = (),
    limits: Mapping[str, tuple[int, int]] | None = None,
) -> Observable[CodeExecutionResult]:
    """A cold Single: the program run in a fresh directory (removed after), as a result.

    Args:
        code_input: the program and its input files.
        env: the child's whole environment, given its directory.
        timeout: seconds before it is killed (None: no limit).
        output_limit: bytes of stdout and of stderr kept.
        timer: where the timeout runs.
        scheduler: the thread that starts and reads the program (the I/O scheduler).
        prefix: a command the interpreter runs under (``unshare ...``).
        python_flags: interpreter flags (``-I``).
        limits: ``resource`` limit names (``RLIMIT_AS``) -> the (soft, hard) values set
            before the program starts (a limit cannot be raised again without privileges).
    """

    def start(resource: abc.DisposableBase | None) -> Observable[CodeExecutionResult]:
        assert isinstance(resource, RunDirectory)
        before = resource.prepare(code_input.code, code_input.input_files)
        argv = [
            *prefix,
            sys.executable,
            *python_flags,
            "-c",
            RUNNER,
            str(resource.program),
            _run_name(code_input.code),
            json.dumps(dict(limits)) if limits else "",
        ]
        return run_process(
            argv,
            cwd=str(resource.work),
            env=env(resource),
            timeout=timeout,
            output_limit=output_limit,
            timer=timer,
            scheduler=scheduler,
        ).pipe(
            ops.map(
                lambda outcome: result_of(
                    outcome,
                    resource.output_files(before) if outcome.returncode is not None else (),
                    timeout,
                    output_limit,
                )
            )
        )

    return rx.using(RunDirectory, start)


def result_of(
    outcome: ProcessOutcome, files: tuple[File, ...], timeout: float | None, limit: int
) -> CodeExecutionResult:
    """The result of a program that ended with ``outcome`` and left ``files``."""
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    error = outcome.stderr.decode("utf-8", errors="replace")
    code = outcome.returncode
    if outcome.timed_out:
        note = f"Code execution timed out after {timeout:g} seconds."
        error = f"{error}\n{note}" if error else note
    elif code == 0:
        error = ""
    elif not error:
        error = _how_it_ended(code)
    if outcome.truncated:
        stdout += f"\n[output cut at {limit} bytes]"
    return CodeExecutionResult(stdout=stdout, stderr=error, output_files=files, exit_code=code)


def _how_it_ended(code: int | None) -> str:
    if code is None:
        return "Code execution could not start."
    if code < 0:
        try:
            sig = signal.Signals(-code)
        except ValueError:
            return f"Code execution was killed by signal {-code}."
        meaning = _SIGNAL_MEANINGS.get(sig)
        return f"Code execution was killed by {sig.name}" + (f": {meaning}." if meaning else ".")
    return f"Code execution exited with status {code}."
